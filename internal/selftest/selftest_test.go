package selftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/selftestreport"
)

// TestMain lets the test binary be the selftest's fixture children, as
// hearth-tray is in a real run.
func TestMain(m *testing.M) {
	if handled, err := Child(os.Args[1:], os.Stdin, os.Stdout); handled {
		if err != nil {
			fmt.Fprintln(os.Stderr, "selftest child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tree lists every file and directory under dir with its size, as
// relative paths.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d", rel, info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustPass are the checks that must answer ok on each system; the rest
// may be skipped where probing finds the host lacks what they need (under
// Wine: UI Automation, the notification area, a Task Scheduler that
// reports what it registered, junctions, symlinks, paths past MAX_PATH),
// but never FAIL.
func mustPass() []string {
	common := []string{"hearth.start", "credentials.roundtrip", "cleanup"}
	if runtime.GOOS != "windows" {
		return append(common, "fs.symlink", "fs.long_path")
	}
	// Wine names no path past MAX_PATH by its handle, so fs.long_path may
	// be skipped there.
	return append(common, "fs.held_open", "uia.fixture", "recovery.task_register", "recovery.task_remove", "recovery.shortcut")
}

// TestRunLeavesNothingBehind runs the whole selftest with the temporary
// directory, the user's data directory, home, caches and application data
// and the report path in a sandbox:
// no check FAILs, those that must pass here do, every skip says why; the
// run's temporary directory is gone afterwards and the only file it left
// is its report, in the data directory and at --report (home, caches and
// application data stay empty); the report holds
// no path of this machine; and (on Windows) no task, credential, window
// or shortcut of the run's names remains.
func TestRunLeavesNothingBehind(t *testing.T) {
	sandbox := t.TempDir()
	temp, dataDir, out := filepath.Join(sandbox, "temp"), filepath.Join(sandbox, "data"), filepath.Join(sandbox, "out")
	for _, d := range []string{temp, dataDir, out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The user's own data: the run must not touch it.
	if err := os.WriteFile(filepath.Join(dataDir, "hearth.db"), []byte("the user's database"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"TMPDIR", "TMP", "TEMP"} {
		t.Setenv(k, temp)
	}
	// The places a program writes to without being asked: home, caches,
	// application data. Each is an empty directory of the sandbox.
	userDirs := map[string]string{}
	for _, k := range []string{"HOME", "USERPROFILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "APPDATA", "LOCALAPPDATA"} {
		d := filepath.Join(sandbox, "user", strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv(k, d)
		userDirs[k] = d
	}
	before := leftovers(t)
	dataBefore := tree(t, dataDir)

	var stdout bytes.Buffer
	rep, err := Run(context.Background(), Options{Stdout: &stdout, DataDir: dataDir, ReportPath: filepath.Join(out, "selftestreport.json"), Version: "test"})
	t.Logf("selftest output:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	statuses := map[string]selftestreport.Result{}
	for _, c := range rep.Checks {
		statuses[c.Name] = c
		if c.Status == selftestreport.Skipped && strings.TrimSpace(c.Detail) == "" {
			t.Errorf("%s was skipped without a reason", c.Name)
		}
	}
	for _, name := range mustPass() {
		if statuses[name].Status != selftestreport.OK {
			t.Errorf("%s: %s %s, want ok here", name, statuses[name].Status, statuses[name].Detail)
		}
	}
	if n := strings.Count(stdout.String(), "\n"); n < len(rep.Checks) {
		t.Errorf("%d lines printed for %d checks", n, len(rep.Checks))
	}

	if entries, err := os.ReadDir(temp); err != nil || len(entries) != 0 {
		t.Errorf("left in the temporary directory: %v %v", entries, err)
	}
	for k, d := range userDirs {
		if got := tree(t, d); len(got) != 1 {
			t.Errorf("the run wrote into %s: %v", k, got)
		}
	}
	dataAfter := tree(t, dataDir)
	added := slices.DeleteFunc(slices.Clone(dataAfter), func(s string) bool { return slices.Contains(dataBefore, s) })
	if len(added) != 1 || !strings.HasPrefix(added[0], selftestreport.FileName+" ") || len(dataAfter) != len(dataBefore)+1 {
		t.Errorf("the data directory changed beyond the report: before %v, after %v", dataBefore, dataAfter)
	}
	saved, err := os.ReadFile(filepath.Join(dataDir, selftestreport.FileName))
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join(out, "selftestreport.json"))
	if err != nil || !bytes.Equal(saved, copied) {
		t.Errorf("the --report copy differs from the saved report: %v", err)
	}
	for _, p := range []string{sandbox, temp, filepath.ToSlash(sandbox)} {
		if bytes.Contains(bytes.ToLower(saved), bytes.ToLower([]byte(p))) {
			t.Errorf("the report holds the path %q", p)
		}
	}
	// Names as whole words, outside the placeholders (a user "root" and
	// the placeholder <fs-root>).
	text := regexp.MustCompile(`<[^<>]*>`).ReplaceAllString(string(saved), "")
	for _, name := range []string{os.Getenv("USERNAME"), os.Getenv("USER"), os.Getenv("COMPUTERNAME")} {
		if len(name) > 2 && regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(name)+`\b`).MatchString(text) {
			t.Errorf("the report holds the name %q", name)
		}
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 2 && bytes.Contains(saved, []byte(home)) {
		t.Errorf("the report holds the home directory")
	}
	after := leftovers(t)
	if !slices.Equal(before, after) {
		t.Errorf("left behind outside the sandbox: before %v, after %v", before, after)
	}
	checkNoFixtures(t, rep)
}

// TestFailedCheckFailsTheRun: one FAIL makes Run answer ErrFailed (exit
// code 1), prints the FAIL line and still writes the selftestreport.
func TestFailedCheckFailsTheRun(t *testing.T) {
	dataDir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	var stdout bytes.Buffer
	rep, err := Run(context.Background(), Options{Stdout: &stdout, DataDir: dataDir, checks: func(*run) []check {
		return []check{
			{name: "fine", run: ok("held")},
			{name: "broken", run: func(context.Context) (string, error) { return "", errors.New("the click counter stayed at 0") }},
			{name: "absent", run: func(context.Context) (string, error) { return "", skip("no notification area") }},
		}
	}})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("Run: %v, want ErrFailed", err)
	}
	if rep.Counts != (selftestreport.Counts{OK: 2, Fail: 1, Skipped: 1}) {
		t.Fatalf("counts %+v (cleanup counts as ok)", rep.Counts)
	}
	for _, want := range []string{"FAIL    broken", "the click counter stayed at 0", "skipped absent", "no notification area", "2 ok, 1 FAIL, 1 skipped"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	s, found, err := selftestreport.LastSummary(dataDir)
	if err != nil || !found || s.Counts != rep.Counts {
		t.Fatalf("saved report: %+v %v %v", s, found, err)
	}
}

// TestKeep keeps the run's temporary directory and says where.
func TestKeep(t *testing.T) {
	temp := t.TempDir()
	t.Setenv("TMPDIR", temp)
	t.Setenv("TMP", temp)
	t.Setenv("TEMP", temp)
	var stdout bytes.Buffer
	if _, err := Run(context.Background(), Options{Stdout: &stdout, Keep: true, checks: func(r *run) []check {
		return []check{{name: "write", run: func(context.Context) (string, error) {
			return "wrote", os.WriteFile(filepath.Join(r.root, "kept.txt"), []byte("x"), 0o600)
		}}}
	}}); err != nil {
		t.Fatal(err)
	}
	kept, _ := filepath.Glob(filepath.Join(temp, "hearth-selftest-*", "files", "kept.txt"))
	if len(kept) != 1 || !strings.Contains(stdout.String(), "kept the selftest's temporary directory") {
		t.Fatalf("kept %v; output:\n%s", kept, stdout.String())
	}
}

// TestSelftestHearthMakesNoBackup: the selftest's temporary Hearth makes
// no daily backup. A backup still being made when the run ends holds a
// file in the temporary directory open, and the clean-up failed under
// Wine on a loaded PC ("unlinkat …\backups\hearth-…-daily.db: Invalid
// function."). A Hearth that backs up does so within moments of its
// start; this one is given several seconds, and the kept data directory
// holds no backups directory afterwards.
func TestSelftestHearthMakesNoBackup(t *testing.T) {
	temp := t.TempDir()
	t.Setenv("TMPDIR", temp)
	t.Setenv("TMP", temp)
	t.Setenv("TEMP", temp)
	var stdout bytes.Buffer
	rep, err := Run(context.Background(), Options{Stdout: &stdout, Keep: true, DataDir: t.TempDir(), checks: func(r *run) []check {
		return []check{
			{name: "hearth.start", run: r.startHearth},
			{name: "no.backup", needs: []string{"hearth.start"}, run: func(ctx context.Context) (string, error) {
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) {
					if made, _ := filepath.Glob(filepath.Join(r.dataDir, "backups", "*")); len(made) > 0 {
						return "", fmt.Errorf("the temporary Hearth is backing up: %v", made)
					}
					time.Sleep(50 * time.Millisecond)
				}
				return "no backup in 5 s", nil
			}},
		}
	}})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stdout.String())
	}
	for _, c := range rep.Checks {
		if c.Status != selftestreport.OK {
			t.Fatalf("%s: %s %s", c.Name, c.Status, c.Detail)
		}
	}
	if dirs, _ := filepath.Glob(filepath.Join(temp, "hearth-selftest-*", "data", "backups")); len(dirs) > 0 {
		t.Fatalf("the temporary Hearth made a backups directory: %v", dirs)
	}
}
