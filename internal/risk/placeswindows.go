package risk

// WindowsPlaces is the persistence table of Windows, its locations taken
// from env: USERPROFILE, APPDATA, LOCALAPPDATA, ProgramData, PUBLIC,
// SystemRoot, ProgramFiles, OneDrive, and the known folders where they
// really are (FOLDERID_Startup, FOLDERID_CommonStartup,
// FOLDERID_Documents, FOLDERID_Desktop: a Startup or Documents folder
// moved by User Shell Folders or OneDrive counts; see KnownFolderEnv).
func WindowsPlaces(env func(string) string) []Place {
	const s = `\`
	profile := env("USERPROFILE")
	appdata := or(env("APPDATA"), join(s, profile, "AppData", "Roaming"))
	local := or(env("LOCALAPPDATA"), join(s, profile, "AppData", "Local"))
	docs := env("FOLDERID_Documents")
	programData := or(env("ProgramData"), `C:\ProgramData`)
	windir := or(env("SystemRoot"), or(env("windir"), `C:\Windows`))
	programFiles := or(env("ProgramFiles"), `C:\Program Files`)
	public := or(env("PUBLIC"), `C:\Users\Public`)
	dir := func(id, say, path string) Place { return Place{ID: id, Kind: UnderDir, Path: path, Sentence: say} }
	file := func(id, say, path string) Place { return Place{ID: id, Kind: ExactFile, Path: path, Sentence: say} }
	scripts := func(path string) Place {
		return Place{ID: "shortcut", Kind: UnderDir, Path: path, Exts: ScriptExts, Sentence: sayShortcut}
	}
	startMenu := func(base string) string { return join(s, base, "Microsoft", "Windows", "Start Menu") }
	ps := []Place{
		dir("autostart", sayAutostart, join(s, startMenu(appdata), "Programs", "Startup")),
		dir("autostart", sayAutostart, join(s, startMenu(programData), "Programs", "Startup")),
		dir("powershell", sayPS, join(s, profile, "Documents", "WindowsPowerShell")),
		dir("powershell", sayPS, join(s, profile, "Documents", "PowerShell")),
		dir("powershell", sayPS, join(s, env("OneDrive"), "Documents", "WindowsPowerShell")),
		dir("powershell", sayPS, join(s, env("OneDrive"), "Documents", "PowerShell")),
		dir("powershell", sayPS, join(s, windir, "System32", "WindowsPowerShell", "v1.0")),
		{ID: "powershell", Kind: UnderDir, Path: join(s, programFiles, "PowerShell"), Exts: []string{".ps1"}, Sentence: sayPS},
		{ID: "git", Kind: GitRepo, Sentence: sayGit},
		file("git", sayGit, join(s, profile, ".gitconfig")),
		file("git", sayGit, join(s, profile, ".config", "git", "config")),
		file("git", sayGit, join(s, programData, "Git", "config")),
		file("git", sayGit, join(s, programFiles, "Git", "etc", "gitconfig")),
		dir("scheduled", sayScheduled, join(s, windir, "System32", "Tasks")),
		dir("scheduled", sayScheduled, join(s, windir, "Tasks")),
		file("ssh", saySSH, join(s, programData, "ssh", "administrators_authorized_keys")),
		file("ssh", saySSH, join(s, programData, "ssh", "sshd_config")),
		scripts(startMenu(appdata)),
		scripts(startMenu(programData)),
		scripts(join(s, profile, "Desktop")),
		scripts(join(s, public, "Desktop")),
		scripts(join(s, env("OneDrive"), "Desktop")),
		scripts(join(s, appdata, "Microsoft", "Internet Explorer", "Quick Launch")),
		dir("autostart", sayAutostart, env("FOLDERID_Startup")),
		dir("autostart", sayAutostart, env("FOLDERID_CommonStartup")),
		dir("powershell", sayPS, join(s, docs, "WindowsPowerShell")),
		dir("powershell", sayPS, join(s, docs, "PowerShell")),
		scripts(env("FOLDERID_Desktop")),
		dir("office", sayOffice, join(s, appdata, "Microsoft", "Excel", "XLSTART")),
		dir("office", sayOffice, join(s, appdata, "Microsoft", "Word", "STARTUP")),
		dir("office", sayOffice, join(s, appdata, "Microsoft", "Templates")),
		dir("office", sayOffice, join(s, appdata, "Microsoft", "AddIns")),
		dir("office", sayOffice, join(s, programFiles, "Microsoft Office", "root", "Office16", "XLSTART")),
		dir("office", sayOffice, join(s, programFiles, "Microsoft Office", "root", "Office16", "STARTUP")),
		{ID: "editor", Kind: UnderDir, Path: join(s, local, "Packages"), Names: []string{"settings.json"}, Sentence: sayEditor},
		dir("editor", sayEditor, join(s, local, "Microsoft", "Windows Terminal")),
		file("editor", sayEditor, join(s, appdata, "Code", "User", "settings.json")),
		file("editor", sayEditor, join(s, appdata, "Code", "User", "tasks.json")),
		file("editor", sayEditor, join(s, appdata, "Code - Insiders", "User", "settings.json")),
	}
	ps = append(ps, anywhere()...)
	for _, f := range ShellFiles {
		ps = append(ps, file("shell", sayShell, join(s, profile, f)))
	}
	for _, f := range SSHFiles {
		ps = append(ps, file("ssh", saySSH, join(s, profile, ".ssh", f)))
	}
	return build(ps)
}
