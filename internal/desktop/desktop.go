// Package desktop opens things the way a person does and lists what can
// be opened: ui.open (a document or folder in the app that shows it, a web
// address in the default browser, an installed app by the name its Start
// menu shows in the PC's own language or by its AppUserModelID) and
// ui.apps (the apps by name, id and kind, so a model finds the right
// name).
//
// What decides lives here in portable code: which of path, url and app a
// call names, the roots a path must be under, the http/https-only rule
// for addresses, whether a file is a program or script (by its extension
// or its first bytes, so that opening it is governed as running it), and
// the closest names for an app that is not installed. The host opens and
// lists through its own launcher: ShellExecuteEx and the Start menu's
// shortcuts on Windows (open_windows.go), xdg-open and the XDG .desktop
// entries elsewhere (open_other.go).
package desktop

import (
	"errors"
	"log/slog"
	"os"

	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/screen"
)

// Service runs ui.open and ui.apps.
type Service struct {
	roots   fsops.Roots
	isPanel func(title string) bool
	display func() (screen.Display, error)
	// inputDesktop says whether input would reach the person's own
	// desktop (screen.InputDesktop); ui.window asks it before any change.
	inputDesktop func() error
	log          *slog.Logger
	// apps is the last reading of the installed apps (apps.go).
	apps *appCache
	// opens is the runs-when-opened test: ui.open of such a file is
	// running a program.
	opens *risk.Opens
	// started holds the apps ui.open started itself, for the e-stop.
	started *proc.Started
}

// New returns a Service whose paths must lie under roots; isPanel tells a
// window showing Hearth's control panel by its title
// (uia.Service.ShowsPanel), which ui.window refuses as Hearth's own;
// started receives the apps ui.open starts itself, which the e-stop kills.
func New(roots fsops.Roots, isPanel func(title string) bool, started *proc.Started, log *slog.Logger) (*Service, error) {
	if log == nil || isPanel == nil || started == nil {
		return nil, errors.New("desktop: a logger, a panel test and the set of started programs are required")
	}
	return &Service{roots: roots, isPanel: isPanel, display: screen.DefaultDisplay, inputDesktop: screen.InputDesktop, log: log, apps: newAppCache(), started: started,
		opens: risk.NewOpens(risk.KnownFolderEnv(os.Getenv))}, nil
}

// App is an installed app as ui.apps lists it.
type App struct {
	// Name is the name the Start menu (or the desktop's app menu) shows,
	// in the PC's language.
	Name string `json:"name"`
	// ID is its AppUserModelID on Windows (a Store app's
	// "Family!App"), else the .desktop entry's id.
	ID string `json:"app_id,omitempty"`
	// Kind is "desktop" (a program with a Start menu shortcut), "store"
	// (a packaged app, opened by its AppUserModelID) or "xdg" (a .desktop
	// entry).
	Kind string `json:"kind"`
	// Program is the program file it starts, when known: governance asks
	// about the app by its file name, as for ui.action.
	Program string `json:"-"`
	// launch is what the host opens for it (a shortcut, a .desktop file).
	launch string
}
