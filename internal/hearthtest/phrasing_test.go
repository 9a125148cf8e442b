package hearthtest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestGoPhrasingCatchesGoAndOSText holds the checker to the texts Go and
// the operating system really produce (made here, live, not copied), and
// to Hearth's own sentences that merely share a word with them.
func TestGoPhrasingCatchesGoAndOSText(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var bad []string
	add := func(err error) {
		if err == nil {
			t.Fatal("expected an error to check")
		}
		bad = append(bad, err.Error())
	}
	_, err := exec.LookPath("hearth-no-such-program")
	add(err)
	add(exec.Command("hearth-no-such-program").Run())
	_, err = os.Open(filepath.Join(dir, "missing"))
	add(err)
	_, err = os.Stat(filepath.Join(dir, "missing", "deeper"))
	add(err)
	_, err = os.ReadDir(file)
	add(err)
	add(os.Mkdir(dir, 0o700))
	add(os.Remove(filepath.Join(dir, "missing")))
	add(json.Unmarshal([]byte("{x"), &struct{}{}))
	add(json.Unmarshal([]byte(`{"a":"s"}`), &struct{ A int }{}))
	add(json.Unmarshal([]byte(``), &struct{}{}))
	_, err = regexp.Compile("(")
	add(err)
	_, err = time.Parse(time.RFC3339, "yesterday")
	add(err)
	_, err = strconv.Atoi("x")
	add(err)
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	add(ctx.Err())
	add(context.Canceled)
	p, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	bad = append(bad, os.ErrProcessDone.Error(), fmt.Sprintf("kill %d: %v", p.Pid, os.ErrProcessDone))
	_, err = base64.StdEncoding.DecodeString("%%%")
	add(err)
	var none error
	verb := "%d"
	bad = append(bad, fmt.Sprintf(verb, "x"), fmt.Sprintf("result: %v", none))
	bad = append(bad,
		`open C:\Users\x\missing.txt: The system cannot find the file specified.`,
		`CreateFile C:\x: Access is denied.`,
		`fork/exec /bin/x: exec format error`,
		`write /tmp/x: broken pipe`,
	)
	for _, msg := range bad {
		if hearthtest.GoPhrasing(msg) == "" {
			t.Errorf("Go/OS text not caught: %q", msg)
		}
	}
	good := []string{
		`machine.exec: program "x" was not found: it is not a path to a program, and no program of that name is on the search path (PATH); give its full path or check its name`,
		`an open UNKNOWN (cmd_abc) blocks this conversation's further non-read calls until it is reconciled`,
		`fs.read: "D:\\x\\y.txt" does not exist`,
		`fs.list: field "path": must be a string`,
		`fs.list: field "path": /x/file.txt is a file, not a directory; use read or stat`,
		`the file was changed since it was read: expected_sha256 does not match`,
	}
	for _, msg := range good {
		if p := hearthtest.GoPhrasing(msg); p != "" {
			t.Errorf("Hearth's own words flagged (%q): %q", p, msg)
		}
	}
}
