# shellcheck shell=bash
# wine.sh: shared helpers for running Hearth's Windows binaries under Wine.
# Source it from a bash script; it defines functions and changes nothing until
# one of them is called.
#
# The Wine prefix is private to Hearth and cached per machine, so only the
# first run pays for `wineboot`:
#   HEARTH_WINE_PREFIX  prefix directory
#                       (default: ${XDG_CACHE_HOME:-$HOME/.cache}/hearth-wine)
#   HEARTH_WINE         wine64 loader (default: /usr/lib/wine/wine64, then PATH)

hearth_wine_repo_root() {
	(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
}

# hearth_wine_env exports what every Wine invocation needs: the prefix, a
# silent debug channel, no Mono/Gecko install prompts, no display.
hearth_wine_env() {
	local cache="${XDG_CACHE_HOME:-${HOME:?HOME or XDG_CACHE_HOME must be set}/.cache}"
	export WINEPREFIX="${HEARTH_WINE_PREFIX:-$cache/hearth-wine}"
	export WINEDEBUG="${WINEDEBUG:--all}"
	export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
	export WINEARCH=win64
	# Console programs need no X server; an inherited DISPLAY would only make
	# Wine try to open windows.
	unset DISPLAY WAYLAND_DISPLAY
	if [[ -z "${HEARTH_WINE:-}" ]]; then
		if [[ -x /usr/lib/wine/wine64 ]]; then
			HEARTH_WINE=/usr/lib/wine/wine64
		elif command -v wine64 >/dev/null 2>&1; then
			HEARTH_WINE="$(command -v wine64)"
		else
			HEARTH_WINE=""
		fi
	fi
	export HEARTH_WINE
	export WINELOADER="${HEARTH_WINE}"
	# wineserver lives beside the loader in Debian's layout.
	if [[ -n "$HEARTH_WINE" && -x "$(dirname "$HEARTH_WINE")/wineserver" ]]; then
		export WINESERVER="$(dirname "$HEARTH_WINE")/wineserver"
	fi
}

# hearth_wine_install_packages installs wine64 and the mingw-w64 C compiler
# with apt-get when either is missing. It waits for another apt/dpkg run to
# finish instead of failing on the lock.
hearth_wine_install_packages() {
	local need=()
	[[ -n "${HEARTH_WINE:-}" && -x "$HEARTH_WINE" ]] || need+=(wine64)
	command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64)
	((${#need[@]} == 0)) && return 0

	if ! command -v apt-get >/dev/null 2>&1; then
		echo "wine: missing ${need[*]} and no apt-get to install them" >&2
		return 1
	fi
	local sudo=()
	if [[ "$(id -u)" != 0 ]]; then
		command -v sudo >/dev/null 2>&1 || {
			echo "wine: missing ${need[*]}; install them as root" >&2
			return 1
		}
		sudo=(sudo)
	fi
	echo "wine: installing ${need[*]}" >&2
	local apt_opts=(-o DPkg::Lock::Timeout=600 -y -q --no-install-recommends)
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 -q update >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get "${apt_opts[@]}" install "${need[@]}" >&2
	HEARTH_WINE=""
	hearth_wine_env
	[[ -x "$HEARTH_WINE" ]] || {
		echo "wine: wine64 still not found after installing" >&2
		return 1
	}
}

# hearth_wine_setup makes the prefix ready: packages installed, prefix
# initialised once with `wineboot -i`, and the ProcessPrng shim DLL present
# in system32. It is idempotent and serialised with a lock, so parallel runs
# on one machine share one prefix safely.
hearth_wine_setup() {
	hearth_wine_env
	hearth_wine_install_packages

	local root shim_src shim_def
	root="$(hearth_wine_repo_root)"
	shim_src="$root/scripts/wine/bcryptprimitives.c"
	shim_def="$root/scripts/wine/bcryptprimitives.def"

	mkdir -p "$(dirname "$WINEPREFIX")"
	local lock="$WINEPREFIX.lock"
	exec {hearth_wine_lock_fd}>"$lock"
	flock "$hearth_wine_lock_fd"

	local version stamp want
	version="$("$HEARTH_WINE" --version 2>/dev/null || echo unknown)"
	# The last word names the registry settings below; change it with them so
	# cached prefixes are brought up to date.
	want="$version $(cat "$shim_src" "$shim_def" | sha256sum | cut -d' ' -f1) graphics=null"
	stamp="$WINEPREFIX/.hearth-ready"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
		flock -u "$hearth_wine_lock_fd"
		exec {hearth_wine_lock_fd}>&-
		return 0
	fi

	if [[ ! -f "$WINEPREFIX/system.reg" ]]; then
		echo "wine: creating prefix (one time per machine)" >&2
		"$HEARTH_WINE" wineboot -i </dev/null >/dev/null 2>&1 || true
		"$WINESERVER" -w
		[[ -f "$WINEPREFIX/system.reg" ]] || {
			echo "wine: wineboot did not create $WINEPREFIX" >&2
			return 1
		}
	fi

	local sys32="$WINEPREFIX/drive_c/windows/system32"
	local tmp
	tmp="$(mktemp -d)"
	x86_64-w64-mingw32-gcc -shared -O2 -s -o "$tmp/bcryptprimitives.dll" \
		"$shim_src" "$shim_def" -ladvapi32
	install -m 0644 "$tmp/bcryptprimitives.dll" "$sys32/bcryptprimitives.dll"
	rm -rf "$tmp"
	# Wine 8 has no builtin of that name; should a later Wine ship one, the
	# native shim still wins, so every Wine behaves the same.
	"$HEARTH_WINE" reg add 'HKCU\Software\Wine\DllOverrides' \
		/v bcryptprimitives /t REG_SZ /d native,builtin /f </dev/null >/dev/null 2>&1
	# Wine's null graphics driver: user32 windows exist (created, sized,
	# parented, shown, hit-tested) but are drawn nowhere, so tests of
	# window plumbing run without an X server. Without it Wine tries X11,
	# finds no DISPLAY and CreateWindowEx fails.
	"$HEARTH_WINE" reg add 'HKCU\Software\Wine\Drivers' \
		/v Graphics /t REG_SZ /d null /f </dev/null >/dev/null 2>&1
	"$WINESERVER" -w
	grep -q '^"Graphics"="null"' "$WINEPREFIX/user.reg" || {
		echo "wine: could not select the null graphics driver in $WINEPREFIX" >&2
		return 1
	}

	echo "$want" >"$stamp"
	flock -u "$hearth_wine_lock_fd"
	exec {hearth_wine_lock_fd}>&-
}

# hearth_wine_go_overlay prints the path of a `go build -overlay` file that
# makes Go's os.RemoveAll work under Wine 8, or nothing when the Go in use
# needs none.
#
# Since Go 1.25, os.RemoveAll (and so every t.TempDir cleanup) on Windows
# deletes through NtSetInformationFile(FileDispositionInformationEx) and
# falls back to the old call only for the status codes real Windows returns
# when the class is unsupported. Wine 8 answers STATUS_NOT_IMPLEMENTED
# instead, so every removal fails with "Invalid function". The overlay adds
# that status to the fallback list in a copy of the standard library file;
# on real Windows the call succeeds and the fallback is never reached, so the
# tested behaviour is unchanged. It is only used for binaries run under Wine,
# never for release builds.
hearth_wine_go_overlay() {
	local goroot gover src dir patched
	goroot="$(go env GOROOT)"
	gover="$(go env GOVERSION)"
	src="$goroot/src/internal/syscall/windows/at_windows.go"
	if [[ ! -f "$src" ]] || ! grep -q 'FileDispositionInformationEx' "$src"; then
		return 0 # this Go does not delete that way
	fi
	if grep -q 'STATUS_NOT_IMPLEMENTED\|0xC0000002' "$src"; then
		return 0 # already falls back on Wine's answer
	fi
	hearth_wine_env
	dir="$WINEPREFIX-go/$gover"
	patched="$dir/at_windows.go"
	mkdir -p "$dir"
	sed 's|^\(\t*\)STATUS_NOT_SUPPORTED:\(.*\)$|\1STATUS_NOT_SUPPORTED,\2\n\1NTStatus(0xC0000002): // STATUS_NOT_IMPLEMENTED, as Wine 8 answers|' \
		"$src" >"$patched.tmp"
	if [[ "$(grep -c 'NTStatus(0xC0000002)' "$patched.tmp")" != 1 ]]; then
		rm -f "$patched.tmp"
		echo "wine: cannot patch Deleteat in $gover's $src; update hearth_wine_go_overlay in scripts/lib/wine.sh" >&2
		return 1
	fi
	mv "$patched.tmp" "$patched"
	printf '{"Replace":{"%s":"%s"}}\n' "$src" "$patched" >"$dir/overlay.json"
	echo "$dir/overlay.json"
}

# hearth_wine_session makes sure a wineserver and Wine's background
# processes (services.exe, winedevice.exe, …) are running for the prefix,
# started with their standard streams on /dev/null.
#
# Without this, the first Windows program run starts them itself and they
# inherit its stdout and stderr. Whoever reads that program's output through
# a pipe (go test, $(...), a CI log) then waits until they exit, which is
# seconds to minutes after the program itself has finished. The server is
# kept HEARTH_WINE_PERSIST seconds (default 30) after the last Wine process
# exits, so consecutive test binaries share one warm session.
hearth_wine_session() {
	local rc=0
	"$WINESERVER" -p"${HEARTH_WINE_PERSIST:-30}" </dev/null >/dev/null 2>&1 || rc=$?
	# rc 2: a server was already running, and with it the background
	# processes. Otherwise ours is new: boot the session detached.
	if ((rc != 2)); then
		"$HEARTH_WINE" wineboot </dev/null >/dev/null 2>&1 || true
	fi
}

# hearth_wine_hold_desktop starts Wine's desktop process (explorer.exe
# /desktop) for the running session with its standard streams on
# /dev/null, and keeps it up with a window-owning holder (notepad.exe,
# which the null graphics driver never shows) until
# hearth_wine_release_desktop.
#
# Without it, the first test binary that touches a window starts the
# desktop itself, and the desktop inherits that binary's stdout. While
# later binaries keep using windows, the desktop stays, and go test, which
# reads the first binary's output through a pipe, gives up a minute after
# that binary exited ("Test I/O incomplete 1m0s after exiting").
hearth_wine_hold_desktop() {
	"$HEARTH_WINE" notepad.exe </dev/null >/dev/null 2>&1 &
	hearth_wine_desktop_holder=$!
	local i
	for ((i = 0; i < 100; i++)); do
		pgrep -f 'explorer.exe /desktop' >/dev/null && return 0
		sleep 0.1
	done
	echo "wine: the desktop did not start within 10 s" >&2
	return 1
}

# hearth_wine_release_desktop ends the holder of hearth_wine_hold_desktop;
# the desktop then closes by itself.
hearth_wine_release_desktop() {
	[[ -n "${hearth_wine_desktop_holder:-}" ]] || return 0
	kill "$hearth_wine_desktop_holder" 2>/dev/null || true
	wait "$hearth_wine_desktop_holder" 2>/dev/null || true
	hearth_wine_desktop_holder=""
}

# hearth_wine_profile_setup makes a second cached prefix whose Windows user
# is an account as people have them: the user name "Zoë Ünal" (letters
# outside ASCII and a space, in the profile folder and every path under
# it), Documents and Desktop moved into OneDrive folders (as OneDrive's
# folder backup does, through User Shell Folders) and Downloads moved out of
# the profile onto a folder of its own. Wine 8 names the user after $USER
# (WINEUSERNAME is not read), and only when $USER is the same for every
# Wine run in the prefix does each session keep that profile: the function
# exports it, so call it in the (sub)shell that then runs the programs.
# HEARTH_WINE_PROFILE is exported as the user name the tests expect.
hearth_wine_profile_setup() {
	local cache="${XDG_CACHE_HOME:-${HOME:?HOME or XDG_CACHE_HOME must be set}/.cache}"
	export HEARTH_WINE_PREFIX="${HEARTH_WINE_PROFILE_PREFIX:-$cache/hearth-wine-profile}"
	export USER='Zoë Ünal' LOGNAME='Zoë Ünal' HEARTH_WINE_PROFILE='Zoë Ünal'
	hearth_wine_setup
	local key='HKCU\Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders'
	local folders=(
		'Personal' '%USERPROFILE%\OneDrive\Documents'
		'Desktop' 'C:\users\Zoë Ünal\OneDrive - Contoso\Desktop'
		'{374DE290-123F-4565-9164-39C4925E467B}' 'C:\Daten Zoë\Downloads'
	)
	local want stamp="$WINEPREFIX/.hearth-profile-ready"
	want="$(printf '%s\n' "${folders[@]}" | sha256sum | cut -d' ' -f1)"
	[[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && return 0
	exec {hearth_wine_lock_fd}>"$WINEPREFIX.lock"
	flock "$hearth_wine_lock_fd"
	local i
	for ((i = 0; i < ${#folders[@]}; i += 2)); do
		"$HEARTH_WINE" reg add "$key" /v "${folders[i]}" /t REG_EXPAND_SZ /d "${folders[i + 1]}" /f </dev/null >/dev/null 2>&1
	done
	"$WINESERVER" -w
	# The moved folders exist, as on the PC whose files are in them.
	mkdir -p "$WINEPREFIX/drive_c/users/$USER/OneDrive/Documents" \
		"$WINEPREFIX/drive_c/users/$USER/OneDrive - Contoso/Desktop" "$WINEPREFIX/drive_c/Daten Zoë/Downloads"
	[[ -d "$WINEPREFIX/drive_c/users/$USER" ]] && grep -q 'OneDrive - Contoso' "$WINEPREFIX/user.reg" || {
		echo "wine: could not make the profile of $USER with moved folders in $WINEPREFIX" >&2
		return 1
	}
	echo "$want" >"$stamp"
	flock -u "$hearth_wine_lock_fd"
	exec {hearth_wine_lock_fd}>&-
}

# hearth_wine_dpi_setup makes a third cached prefix whose screen has 144 dpi
# (150 % scaling): LogPixels, which Wine reads when a process starts, set
# under HKLM\System\CurrentControlSet\Hardware Profiles\Current\Software\Fonts
# in a prefix of its own, since every process started in a prefix while it
# is set would see it. HEARTH_WINE_DPI is exported as the DPI the tests
# expect. Call it in the (sub)shell that then runs the programs.
hearth_wine_dpi_setup() {
	local cache="${XDG_CACHE_HOME:-${HOME:?HOME or XDG_CACHE_HOME must be set}/.cache}"
	export HEARTH_WINE_PREFIX="${HEARTH_WINE_DPI_PREFIX:-$cache/hearth-wine-dpi}" HEARTH_WINE_DPI=144
	hearth_wine_setup
	local stamp="$WINEPREFIX/.hearth-dpi-ready"
	[[ -f "$stamp" && "$(cat "$stamp")" == "$HEARTH_WINE_DPI" ]] && return 0
	exec {hearth_wine_lock_fd}>"$WINEPREFIX.lock"
	flock "$hearth_wine_lock_fd"
	"$HEARTH_WINE" reg add 'HKLM\System\CurrentControlSet\Hardware Profiles\Current\Software\Fonts' \
		/v LogPixels /t REG_DWORD /d "$HEARTH_WINE_DPI" /f </dev/null >/dev/null 2>&1
	"$WINESERVER" -w
	grep -q "^\"LogPixels\"=dword:$(printf '%08x' "$HEARTH_WINE_DPI")" "$WINEPREFIX/system.reg" || {
		echo "wine: could not set LogPixels to $HEARTH_WINE_DPI in $WINEPREFIX" >&2
		return 1
	}
	echo "$HEARTH_WINE_DPI" >"$stamp"
	flock -u "$hearth_wine_lock_fd"
	exec {hearth_wine_lock_fd}>&-
}
