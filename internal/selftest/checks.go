package selftest

// checks is the run's check list, in order. Names are stable: testers'
// reports and the tests refer to them.
func (r *run) checks() []check {
	hearth := []string{"hearth.start"}
	ui := []string{"uia.available", "uia.fixture"}
	return []check{
		{name: "hearth.start", run: r.startHearth},
		{name: "credentials.roundtrip", run: r.checkCredentials},
		{name: "fs.symlink", needs: hearth, run: r.checkSymlink},
		{name: "fs.junction", needs: hearth, run: r.checkJunction},
		{name: "fs.long_path", needs: hearth, run: r.checkLongPath},
		{name: "fs.held_open", needs: hearth, run: r.checkHeldOpen},
		{name: "session.console", needs: hearth, run: r.checkSession},
		{name: "uia.available", needs: hearth, run: r.checkUIAvailable},
		{name: "uia.fixture", run: r.checkFixture},
		{name: "uia.snapshot", needs: ui, run: r.checkSnapshot},
		{name: "uia.bounds", needs: ui, run: r.checkBounds},
		{name: "uia.query", needs: ui, run: r.checkQuery},
		{name: "uia.invoke", needs: ui, run: r.checkInvoke},
		{name: "uia.set_value", needs: ui, run: r.checkSetValue},
		{name: "uia.focus", needs: ui, run: r.checkFocus},
		{name: "uia.fallback_click", needs: ui, run: r.checkFallbackClick},
		{name: "uia.fallback_key", needs: ui, run: r.checkFallbackKey},
		{name: "uia.panel_refused", needs: ui, run: r.checkPanelRefused},
		{name: "uia.elevated", needs: ui, run: r.checkElevated},
		{name: "screen.screenshot", needs: []string{"hearth.start", "uia.fixture"}, run: r.checkScreenshot},
		{name: "screen.clipboard", needs: hearth, run: r.checkClipboard},
		{name: "desktop.windows", needs: []string{"hearth.start", "uia.fixture"}, run: r.checkWindows},
		{name: "desktop.open_file", needs: hearth, run: r.checkOpenFile},
		{name: "desktop.open_notepad", needs: hearth, run: r.checkOpenNotepad},
		{name: "desktop.store_apps", needs: hearth, run: r.checkStoreApps},
		{name: "desktop.uac_refused", run: r.checkSecureDesktop},
		{name: "tray.icon", run: r.checkTrayIcon},
		{name: "tray.menu", needs: []string{"tray.icon"}, run: r.checkTrayMenu},
		{name: "tray.notification", needs: hearth, run: r.checkTrayNotification},
		{name: "recovery.task_register", run: r.checkTaskRegister},
		{name: "recovery.task_settings", needs: []string{"recovery.task_register"}, run: r.checkTaskSettings},
		{name: "recovery.task_run", needs: []string{"recovery.task_settings"}, run: r.checkTaskRun},
		{name: "recovery.task_remove", needs: []string{"recovery.task_register"}, run: r.checkTaskRemove},
		{name: "recovery.shortcut", run: r.checkShortcut},
	}
}

// notWindows is the skip of a check of a Windows-only part.
func notWindows(part string) error {
	return skip("%s is a Windows part; this is not Windows", part)
}
