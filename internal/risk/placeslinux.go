package risk

// LinuxPlaces is the persistence table of Linux (and other Unix-like
// systems), its locations taken from env: HOME, XDG_CONFIG_HOME,
// XDG_DATA_HOME.
func LinuxPlaces(env func(string) string) []Place {
	home := env("HOME")
	cfg := or(env("XDG_CONFIG_HOME"), join("/", home, ".config"))
	data := or(env("XDG_DATA_HOME"), join("/", home, ".local", "share"))
	dir := func(id, say, path string) Place { return Place{ID: id, Kind: UnderDir, Path: path, Sentence: say} }
	file := func(id, say, path string) Place { return Place{ID: id, Kind: ExactFile, Path: path, Sentence: say} }
	ps := []Place{
		dir("autostart", sayAutostart, join("/", cfg, "autostart")),
		dir("autostart", sayAutostart, "/etc/xdg/autostart"),
		dir("shell", sayShell, join("/", cfg, "fish")),
		dir("shell", sayShell, join("/", cfg, "environment.d")),
		dir("shell", sayShell, "/etc/profile.d"),
		file("shell", sayShell, "/etc/profile"),
		file("shell", sayShell, "/etc/bash.bashrc"),
		file("shell", sayShell, "/etc/environment"),
		dir("shell", sayShell, "/etc/zsh"),
		{ID: "git", Kind: GitRepo, Sentence: sayGit},
		file("git", sayGit, join("/", home, ".gitconfig")),
		file("git", sayGit, join("/", cfg, "git", "config")),
		file("git", sayGit, "/etc/gitconfig"),
		dir("service", sayService, join("/", cfg, "systemd")),
		dir("service", sayService, join("/", data, "systemd")),
		dir("service", sayService, "/etc/systemd"),
		dir("service", sayService, "/etc/xdg/systemd"),
		dir("service", sayService, "/etc/init.d"),
		file("service", sayService, "/etc/rc.local"),
		dir("scheduled", sayScheduled, "/var/spool/cron"),
		file("scheduled", sayScheduled, "/etc/crontab"),
		dir("scheduled", sayScheduled, "/etc/cron.d"),
		dir("scheduled", sayScheduled, "/etc/cron.hourly"),
		dir("scheduled", sayScheduled, "/etc/cron.daily"),
		dir("scheduled", sayScheduled, "/etc/cron.weekly"),
		dir("scheduled", sayScheduled, "/etc/cron.monthly"),
		dir("scheduled", sayScheduled, "/var/spool/anacron"),
		dir("ssh", saySSH, "/etc/ssh"),
		{ID: "shortcut", Kind: UnderDir, Path: join("/", data, "applications"), Exts: []string{".desktop"}, Sentence: sayShortcut},
		dir("shell", sayShell, join("/", home, ".bashrc.d")),
		dir("shell", sayShell, join("/", home, ".zshrc.d")),
		dir("shell", sayShell, join("/", home, ".oh-my-zsh")),
		dir("service", sayService, join("/", data, "dbus-1")),
		dir("autostart", sayAutostart, join("/", cfg, "plasma-workspace")),
		dir("autostart", sayAutostart, join("/", cfg, "autostart-scripts")),
		dir("autostart", sayAutostart, join("/", cfg, "i3")),
		dir("autostart", sayAutostart, join("/", home, ".i3")),
		dir("autostart", sayAutostart, join("/", cfg, "sway")),
		dir("autostart", sayAutostart, join("/", cfg, "openbox")),
		dir("autostart", sayAutostart, join("/", cfg, "labwc")),
		dir("autostart", sayAutostart, join("/", cfg, "hypr")),
		dir("autostart", sayAutostart, join("/", cfg, "lxsession")),
		dir("autostart", sayAutostart, join("/", cfg, "xfce4", "xfconf")),
		dir("ssh", saySSH, join("/", home, ".ssh", "config.d")),
		file("editor", sayEditor, join("/", cfg, "Code", "User", "settings.json")),
		file("editor", sayEditor, join("/", cfg, "Code", "User", "tasks.json")),
		file("editor", sayEditor, join("/", cfg, "Code - Insiders", "User", "settings.json")),
		file("editor", sayEditor, join("/", cfg, "VSCodium", "User", "settings.json")),
	}
	ps = append(ps, anywhere()...)
	for _, f := range ShellFiles {
		ps = append(ps, file("shell", sayShell, join("/", home, f)))
	}
	for _, f := range SSHFiles {
		ps = append(ps, file("ssh", saySSH, join("/", home, ".ssh", f)))
	}
	return build(ps)
}

// ShellFiles are the start-up files of the usual shells and X sessions,
// in the home directory (Git Bash and WSL read them on Windows too).
var ShellFiles = []string{".bashrc", ".bash_aliases", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login",
	".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".pam_environment", ".inputrc"}

// SSHFiles are the files in ~/.ssh that let someone in or make SSH run a
// program.
var SSHFiles = []string{"authorized_keys", "authorized_keys2", "config", "rc", "environment"}
