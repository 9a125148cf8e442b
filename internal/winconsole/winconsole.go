// Package winconsole lets Hearth's GUI-subsystem executable behave like a
// console program when it is started from a terminal.
//
// hearth-tray.exe is linked with -H windowsgui so that a double-click (and
// the Task Scheduler's ensure task) shows no console window. The price is
// that Windows gives such a process no console: started from cmd.exe or
// PowerShell, `hearth-tray serve`, `ledger verify`, `doctor` and the other
// subcommands would print nothing. cmd/hearth-tray therefore calls
// AttachParent first thing for every subcommand (not for the bare tray
// start), which joins the terminal's console and points os.Stdin, os.Stdout
// and os.Stderr at it.
//
// Limits of a GUI-subsystem program, by design of Windows: cmd.exe and
// PowerShell do not wait for it, so their prompt may come back before the
// output ends, and the exit code is seen only by a caller that waits for the
// process (`start /wait hearth-tray doctor` then %ERRORLEVEL%, PowerShell's
// `Start-Process -Wait -PassThru`, or any program that starts it, such as CI
// scripts and the Task Scheduler). Output redirected to a file or pipe works
// as usual: handles that are already valid are never replaced.
//
// Off Windows, AttachParent does nothing.
package winconsole
