package machine_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestBatchAnswersPartialNamingTheFailedCommands runs batches through a
// real Hearth: all commands succeed (completed), some fail (partial, each
// failed one named with why), every one fails (failed). Every item's
// result is in the answer whatever its state.
func TestBatchAnswersPartialNamingTheFailedCommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the commands are POSIX sh")
	}
	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "batch-states")
	ok := map[string]any{"command": "sh", "args": []string{"-c", "echo fine"}}
	exits := map[string]any{"command": "sh", "args": []string{"-c", "exit 3"}}
	missing := map[string]any{"command": "hearth-no-such-program"}
	batch := func(cmds ...any) *hearthtest.Result {
		_, r := c.Settled("machine", map[string]any{"operation": "batch", "commands": cmds})
		return r
	}

	r := batch(ok, ok)
	if r.State() != "completed" || r.IsError || r.Get("result.failed") != float64(0) {
		t.Fatalf("a batch whose commands all succeed: %s", r.Raw)
	}

	r = batch(ok, exits, missing)
	msg, _ := r.Get("error.message").(string)
	if r.State() != "partial" || !r.IsError || r.Get("error.code") != "some_failed" {
		t.Fatalf("a half-failed batch must answer partial: %s", r.Raw)
	}
	if got := fmt.Sprint(r.Get("error.details.failed_indexes")); got != "[1 2]" {
		t.Errorf("failed_indexes %s, want [1 2]", got)
	}
	for _, want := range []string{"2 of 3 commands failed", "commands[1] (sh): exit code 3", "commands[2] (hearth-no-such-program)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "commands[0]") {
		t.Errorf("message %q names a command that succeeded", msg)
	}
	if r.Get("result.results.0.result.stdout.text") != "fine\n" || r.Get("result.results.0.failed") != nil {
		t.Errorf("the command that succeeded keeps its result: %s", r.Raw)
	}
	if r.Get("result.results.1.result.exit_code") != float64(3) || r.Get("result.results.1.failed") != true {
		t.Errorf("the command that exited 3 keeps its result, marked failed: %s", r.Raw)
	}
	if r.Get("result.results.2.code") != "program_not_found" || r.Get("result.results.2.failed") != true {
		t.Errorf("the missing program is named with its code: %s", r.Raw)
	}

	r = batch(exits, missing)
	if r.State() != "failed" || r.Get("error.code") != "all_failed" || r.Get("result.results.1.failed") != true {
		t.Fatalf("a batch whose commands all fail: %s", r.Raw)
	}
}
