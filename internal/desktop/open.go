package desktop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// OpenInput is ui.open's input: exactly one of Path, URL and App.
type OpenInput struct {
	Path string `json:"path,omitempty"`
	URL  string `json:"url,omitempty"`
	App  string `json:"app,omitempty"`
}

// Opened is ui.open's result.
type Opened struct {
	// Opened is what was opened: "path", "url" or "app".
	Opened string `json:"opened"`
	Path   string `json:"path,omitempty"`
	URL    string `json:"url,omitempty"`
	App    *App   `json:"app,omitempty"`
	// ProcessID is the process the host started for it, when it says
	// (an app already running may take the request over instead).
	ProcessID int `json:"process_id,omitempty"`
}

func invalid(op, field, format string, a ...any) error {
	ve := &primitive.ValidationError{Tool: "ui", Operation: op, Field: field, Msg: fmt.Sprintf(format, a...)}
	return primitive.Failed("invalid_input", "%s", ve.Error())
}

// unreadable is ui.open's error for a path under a root that it could
// not look at (to see whether opening it runs a program): in Hearth's
// words, the system's error under details.
func unreadable(path string, err error) error {
	msg := "Hearth could not read " + path + " to see what opening it would run"
	if errors.Is(err, fs.ErrNotExist) {
		msg = "there is no file or folder at " + path
	}
	ve := &primitive.ValidationError{Tool: "ui", Operation: "open", Field: "path", Msg: msg}
	return primitive.Failed("invalid_input", "%s", ve.Error()).WithDetails(map[string]any{"system_error": err.Error()})
}

// IsProgram reports whether the file at path runs a program when
// opened, by the one test the allowlist of writes uses too
// (risk.Opens.Runs): its name (the runs-when-opened table, PATHEXT, a
// CLSID name, a Windows handler that runs code), its execute bit off
// Windows, its first bytes (a Windows or ELF executable, a #! script).
// A folder never is.
func IsProgram(opens *risk.Opens, path string) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if fi.IsDir() {
		return false, nil
	}
	if opens.ByName(path) {
		return true, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, risk.HeadSize)
	n, _ := io.ReadFull(f, head)
	return opens.Runs(path, execBit(fi), head[:n]), nil
}

// checkURL accepts an absolute http or https address with a host.
func checkURL(raw string) (string, error) {
	for _, r := range raw {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return "", invalid("open", "url", "holds a space or a control character; percent-encode it")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", invalid("open", "url", "not a web address: %v", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return "", invalid("open", "url", "give a whole address starting with https:// or http://")
	default:
		return "", invalid("open", "url", "only http and https addresses open here (this one is %s:); open a file with path, an app with app", strings.ToLower(u.Scheme))
	}
	if u.Host == "" || u.User != nil {
		return "", invalid("open", "url", "give an address with a host name and no user name or password in it")
	}
	return u.String(), nil
}

// plan is a checked ui.open call.
type plan struct {
	in      OpenInput
	path    string // resolved, real
	url     string
	app     *App
	program bool
}

// check validates in and finds what it names.
func (s *Service) check(in OpenInput) (*plan, error) {
	n := 0
	for _, v := range []string{in.Path, in.URL, in.App} {
		if v != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return nil, invalid("open", "path", "give one of path (a file or folder), url (an http or https address) or app (a name from ui.apps)")
	case n > 1:
		field := "url"
		if in.App != "" {
			field = "app"
		}
		return nil, invalid("open", field, "give only one of path, url and app")
	}
	p := &plan{in: in}
	switch {
	case in.Path != "":
		abs, err := s.roots.Resolve(in.Path)
		if err != nil {
			return nil, invalid("open", "path", "%v", err)
		}
		if p.program, err = IsProgram(s.opens, abs); err != nil {
			return nil, unreadable(abs, err)
		}
		p.path = abs
	case in.URL != "":
		u, err := checkURL(in.URL)
		if err != nil {
			return nil, err
		}
		p.url = u
	default:
		a, err := s.findApp(in.App)
		if err != nil {
			return nil, err
		}
		p.app = a
	}
	return p, nil
}

// findApp finds the app named name (its Start menu name, any case, or its
// id); an unknown name answers with the closest names.
func (s *Service) findApp(name string) (*App, error) {
	apps, err := s.apps.get()
	if err != nil {
		return nil, primitive.Failed("apps_unavailable", "ui.open: list the installed apps: %v", err)
	}
	if a := pick(apps, name); a != nil {
		return a, nil
	}
	if isAUMID(name) {
		// A packaged app that no shortcut names still opens by its id.
		return &App{Name: name, ID: name, Kind: "store", Program: strings.ToLower(name)}, nil
	}
	near := closest(apps, name, 5)
	if len(near) == 0 {
		return nil, invalid("open", "app", "no installed app is named %q (ui.apps lists them)", name)
	}
	return nil, invalid("open", "app", "no installed app is named %q; the closest names: %s (ui.apps lists them all)", name, strings.Join(near, ", "))
}

// isAUMID reports whether s looks like a packaged app's AppUserModelID
// ("Microsoft.WindowsCalculator_8wekyb3d8bbwe!App").
func isAUMID(s string) bool {
	fam, app, ok := strings.Cut(s, "!")
	return ok && strings.Contains(fam, "_") && app != "" && !strings.ContainsAny(s, `\/: `)
}

// pick returns the app whose name or id is name, ignoring case.
func pick(apps []App, name string) *App {
	for _, a := range apps {
		if strings.EqualFold(a.Name, name) || (a.ID != "" && strings.EqualFold(a.ID, name)) {
			return &a // a copy: the listing is shared (appCache)
		}
	}
	return nil
}

// closest returns at most n app names nearest to name: names that contain
// it or that it contains first, then by edit distance.
func closest(apps []App, name string, n int) []string {
	q := strings.ToLower(name)
	type scored struct {
		name  string
		score int
	}
	var all []scored
	seen := map[string]bool{}
	for _, a := range apps {
		if seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		l := strings.ToLower(a.Name)
		d := distance(q, l)
		if strings.Contains(l, q) || strings.Contains(q, l) {
			d = -1000 + len(l)
		}
		all = append(all, scored{a.Name, d})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score < all[j].score })
	var out []string
	for _, s := range all {
		if len(out) == n || s.score > max(len([]rune(q)), 3) {
			break
		}
		out = append(out, s.name)
	}
	return out
}

// distance is the edit distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Open runs ui.open.
func (s *Service) Open(ctx context.Context, in OpenInput) (*Opened, error) {
	p, err := s.check(in)
	if err != nil {
		return nil, err
	}
	var pid int
	out := &Opened{}
	switch {
	case p.path != "":
		out.Opened, out.Path = "path", p.path
		pid, err = openFile(ctx, p.path)
	case p.url != "":
		out.Opened, out.URL = "url", p.url
		pid, err = openURL(ctx, p.url)
	default:
		out.Opened, out.App = "app", p.app
		pid, err = openApp(ctx, p.app, s.started)
	}
	if err != nil {
		return nil, primitive.Failed("open_failed", "ui.open: %s could not be opened: %v", out.Opened, err)
	}
	out.ProcessID = pid
	s.log.Info("ui.open", "opened", out.Opened, "pid", pid)
	return out, nil
}

// target is ui.open's Target: a program or script is an exec (its path
// named); an app is named by its program's file name, as ui.action names
// the app it drives; a document, folder or web address names nothing.
// Input that does not check names nothing either: the call is refused
// when it runs.
func (s *Service) target(_ context.Context, _ string, raw json.RawMessage) (primitive.Target, error) {
	var in OpenInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return primitive.Target{}, fmt.Errorf("decode input: %w", err)
	}
	p, err := s.check(in)
	if err != nil {
		return primitive.Target{}, nil
	}
	switch {
	case p.program:
		return primitive.Target{Paths: []string{p.path}, Program: true}, nil
	case p.app != nil:
		app := strings.ToLower(filepath.Base(strings.ReplaceAll(p.app.Program, `\`, "/")))
		if app == "" || app == "." {
			app = strings.ToLower(p.app.Name)
		}
		return primitive.Target{App: app, Console: risk.IsConsoleApp(app)}, nil
	}
	return primitive.Target{}, nil
}

// Apps runs ui.apps: the installed apps, by name, optionally only those
// whose name or id contains query.
func (s *Service) Apps(_ context.Context, query string, limit int) (*AppList, error) {
	apps, err := s.apps.get()
	if err != nil {
		return nil, primitive.Failed("apps_unavailable", "ui.apps: list the installed apps: %v", err)
	}
	q := strings.ToLower(query)
	out := &AppList{Apps: []App{}}
	for _, a := range apps {
		if q != "" && !strings.Contains(strings.ToLower(a.Name), q) && !strings.Contains(strings.ToLower(a.ID), q) {
			continue
		}
		if len(out.Apps) == limit {
			out.Truncated = true
			break
		}
		out.Apps = append(out.Apps, a)
	}
	return out, nil
}

// AppList is ui.apps' result.
type AppList struct {
	Apps      []App `json:"apps"`
	Truncated bool  `json:"truncated,omitempty"`
}

// AppOf finds the installed app whose program file is program (a file
// name such as "notepad.exe", any case): the selftest opens Notepad by
// the name the Start menu gives it in the PC's language.
func AppOf(program string) (App, bool, error) {
	apps, err := listApps()
	if err != nil {
		return App{}, false, err
	}
	for _, a := range apps {
		if strings.EqualFold(filepath.Base(strings.ReplaceAll(a.Program, `\`, "/")), program) {
			return a, true, nil
		}
	}
	return App{}, false, nil
}
