package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// errorCases are, for every operation, inputs that make it answer an
// error (or carry errors in its result) beyond what schema validation
// refuses: a missing path, a missing program, an unknown id, a bad
// value only the operation itself can judge. An operation with nothing
// to refuse beyond validation maps to nil, and says why.
func errorCases(root string) map[string][]map[string]any {
	file := filepath.Join(root, "file.txt")
	dir := filepath.Join(root, "dir")
	missing := filepath.Join(root, "missing", "deeper.txt")
	outside := filepath.Join(filepath.Dir(root), "outside-the-roots.txt")
	const noArt, noFut, noRun = "art_aaaaaaaaaaaaaaaaaaaa", "fut_aaaaaaaaaaaaaaaaaaaa", "run_aaaaaaaaaaaaaaaaaaaa"
	const noSess = "sess_aaaaaaaaaaaaaaaaaaaa"
	noProg := map[string]any{"command": "hearth-no-such-program"}
	notProg := map[string]any{"command": file}
	return map[string][]map[string]any{
		"machine.host_info":    nil, // nothing to refuse
		"machine.process_list": nil, // nothing to refuse
		"machine.estop":        nil, // always available; latched at the end of the test
		"machine.exec": {noProg, notProg, {"command": dir}, {"command": filepath.Join(root, "missing", "prog")},
			{"command": "sh", "cwd": missing}, {"command": "sh", "cwd": file}, {"command": "sh", "timeout_ms": int64(1) << 50},
			{"command": "sh", "env": map[string]any{"A=B": "x"}}, {"command": "  "}, {"command": "sh\x00"}},
		"machine.batch": {{"commands": []any{noProg, map[string]any{"command": "sh", "args": []any{"-c", "exit 0"}}}}, {"commands": []any{noProg, notProg}},
			{"commands": []any{map[string]any{"command": "sleep", "args": []any{"5"}, "timeout_ms": 50}, map[string]any{"command": "sh", "args": []any{"-c", "exit 0"}}}}},
		"machine.process_kill": {{"pid": os.Getpid()}, {"pid": 2147483646}},
		"machine.session_start": {noProg, notProg, {"command": dir}, {"command": "sh", "cwd": missing},
			{"command": "sh", "env": map[string]any{"A=B": "x"}}, {"command": "sh\x00"}},
		"machine.session_send":  {{"session_id": noSess, "text": "x"}, {"session_id": "x", "keys": []any{"Enter"}}, {"session_id": noSess, "keys": []any{"NoSuchKey"}}},
		"machine.session_read":  {{"session_id": noSess}, {"session_id": "x", "wait_ms": 10}},
		"machine.session_close": {{"session_id": noSess}, {"session_id": "x"}},
		"machine.session_list":  nil, // nothing to refuse
		"ui.screenshot": {{"hwnd": 5, "monitor": 1}, {"region": map[string]any{"x": 0, "y": 0, "w": 0, "h": 5}}, {"quality": 50},
			{"process_id": 2147483646}, {"monitor": 9}},
		"ui.clipboard_get": {{"max_bytes": 2097152}, {}},
		"ui.clipboard_set": {{"text": "a\u0000b"}, {"text": "x"}},
		"fs.list":          {{"path": missing}, {"path": file}, {"path": outside}, {"path": "relative/path"}},
		"fs.read":          {{"path": missing}, {"path": dir}, {"path": outside}, {"path": file + ":stream"}, {"path": file, "offset": 1 << 40}},
		"fs.search": {{"path": missing, "query": "x"}, {"path": root, "query": "(", "regex": true}, {"path": outside, "query": "x"},
			{"path": root, "query": "x", "include": []any{"[z-a]"}}},
		"fs.stat": {{"path": outside}, {"path": filepath.Join(root, "..", "x")}, {"path": "relative"}},
		"fs.write": {{"path": dir, "data": "x"}, {"path": missing, "data": "x"}, {"path": outside, "data": "x"},
			{"path": file, "data": "x", "expected_sha256": strings.Repeat("0", 64)}, {"path": file, "data": "x", "expected_sha256": "nothex"},
			{"path": file, "data": "%%%", "encoding": "base64"}},
		"fs.patch": {{"path": missing, "replacements": []any{map[string]any{"old": "a", "new": "b"}}},
			{"path": file, "replacements": []any{map[string]any{"old": "no such text", "new": "b"}}},
			{"path": dir, "replacements": []any{map[string]any{"old": "a", "new": "b"}}}},
		"fs.undo": {{"receipt_id": "rcpt_aaaaaaaaaaaaaaaaaaaa"}, {"receipt_id": "not-a-receipt"},
			{"receipt_ids": []any{"rcpt_aaaaaaaaaaaaaaaaaaaa"}}, {"receipt_ids": []any{"x"}}, {}},
		"fs.changes": {{"cursor": "nonsense"}},
		"fs.move": {{"from": missing, "to": filepath.Join(root, "moved.txt")}, {"from": file, "to": file}, {"from": outside, "to": filepath.Join(root, "o.txt")},
			{"from": dir, "to": filepath.Join(dir, "inside")}, {"from": file, "to": "relative"}, {"items": []any{map[string]any{"from": file}}},
			{"items": []any{map[string]any{"from": missing, "to": filepath.Join(root, "m1.txt")}, map[string]any{"from": outside, "to": filepath.Join(root, "m2.txt")}}}},
		"fs.copy": {{"from": missing, "to": filepath.Join(root, "copied.txt")}, {"from": file, "to": file}, {"from": outside, "to": filepath.Join(root, "o.txt")},
			{"from": dir, "to": filepath.Join(dir, "inside")}, {"from": file, "path": file, "to": filepath.Join(root, "c.txt")}},
		"fs.mkdir": {{"path": file}, {"path": outside}, {"path": "relative"}, {"path": filepath.Join(root, "new"), "overwrite": true}},
		"fs.trash": {{"path": missing}, {"path": outside}, {"path": "relative"}, {"path": file, "from": file},
			{"items": []any{map[string]any{"path": missing}, map[string]any{"path": outside}}}},
		"fs.xlsx_set": {{"path": outside, "cells": map[string]any{"A1": 1}}, {"path": file, "cells": map[string]any{"A1": 1}},
			{"path": filepath.Join(root, "macros.xlsm"), "cells": map[string]any{"A1": 1}},
			{"path": filepath.Join(root, "book.xlsx"), "cells": map[string]any{"not a cell": 1}},
			{"path": filepath.Join(root, "book.xlsx"), "cells": map[string]any{"A1": 1}, "expected_sha256": strings.Repeat("0", 64)},
			{"path": filepath.Join(root, "file.xlsx"), "cells": map[string]any{"A1": 1}}},
		"fs.docx_write": {{"path": outside, "markdown": "# x"}, {"path": file, "markdown": "# x"},
			{"path": filepath.Join(root, "letter.docm"), "markdown": "# x"}, {"path": "relative.docx", "markdown": "# x"},
			{"path": filepath.Join(root, "letter.docx"), "markdown": "# x", "expected_sha256": strings.Repeat("0", 64)}},
		"artifact.list":     nil, // nothing to refuse
		"artifact.metadata": {{"id": noArt}, {"id": "x"}},
		"artifact.read":     {{"id": noArt}, {"id": "../x"}},
		"artifact.range":    {{"id": noArt}},
		"artifact.search":   {{"id": noArt, "query": "x"}},
		"task.submit": {{}, {"job": noProg}, {"job": noProg, "jobs": []any{noProg}}, {"job": map[string]any{"command": "sh", "dependencies": []any{noFut}}},
			{"job": map[string]any{"command": "sh", "run_at": "yesterday"}}, {"job": map[string]any{"command": "sh", "cwd": missing}}},
		"task.get":       {{"id": noFut}, {"id": "x"}},
		"task.status":    {{"id": noFut}},
		"task.wait":      {{"id": noFut}},
		"task.cancel":    {{"id": noFut}},
		"task.list":      nil, // nothing to refuse
		"task.reconcile": {{"id": "cmd_aaaaaaaaaaaaaaaaaaaa", "observed": "x"}, {"id": "x", "observed": "x"}},
		"ui.open": {{}, {"path": missing}, {"path": outside}, {"path": "relative/doc.txt"}, {"url": "javascript:alert(1)"},
			{"url": "file:///etc/passwd"}, {"url": "ms-settings:display"}, {"app": "hearth-no-such-app"}, {"path": file, "url": "https://example.org/"}},
		"ui.apps":     nil, // a bounded listing: nothing to refuse beyond validation
		"ui.windows":  {{"process_id": 2147483646}},
		"ui.window":   {{}, {"hwnd": 5}, {"hwnd": 2147483646, "window_action": "focus"}, {"hwnd": 5, "window_action": "move"}, {"hwnd": 5, "window_action": "resize", "w": 10}},
		"ui.snapshot": {{}, {"process_id": 2147483646}},
		"ui.query":    {{"target": map[string]any{"name": "x"}}},
		"ui.action":   {{"target": map[string]any{"name": "x"}, "action": "invoke"}, {"target": map[string]any{}, "action": "click", "allow_fallback": true}},
		"recipe.create": {{"name": "bad name!"}, {"name": "r1", "steps": []any{map[string]any{"primitive": "machine.batch", "input": map[string]any{}}}},
			{"name": "r2", "steps": []any{map[string]any{"primitive": "fs.read", "input": map[string]any{"path": 5}}}},
			{"name": "r3", "steps": []any{"not an object"}}},
		"recipe.list":    nil, // nothing to refuse
		"recipe.get":     {{"name": "no-such-recipe"}},
		"recipe.stats":   {{"name": "no-such-recipe"}},
		"recipe.delete":  {{"name": "no-such-recipe"}},
		"recipe.run":     {{"name": "no-such-recipe"}, {"name": "fails"}, {"name": "fails", "params": map[string]any{"x": "y"}}},
		"recipe.suggest": nil, // bounds are validation's
		"run.checkpoint": {{"id": noRun, "summary": "x"}, {"id": "x"}},
		"run.list":       {{"state": "bogus"}},
		"run.get":        {{"id": noRun}, {"id": "x"}},
		"run.close":      {{"id": noRun}},
		"run.events":     {{"entity_id": "x", "limit": 1}},
		"run.schedule_continuation": {{"run_id": noRun, "prompt": "x"}, {"run_id": noRun, "prompt": "x", "run_at": "yesterday"},
			{"run_id": noRun, "prompt": "x", "target": map[string]any{"bogus": 1}}},
		"run.continuation_status": {{"id": "x"}, {"id": "cont_aaaaaaaaaaaaaaaaaaaa"}},
		"run.scatter": {{"calls": []any{map[string]any{"kind": "fs.read", "path": missing}, map[string]any{"kind": "machine.exec", "command": "hearth-no-such-program"},
			map[string]any{"kind": "machine.host_info"}}},
			{"calls": []any{map[string]any{"kind": "machine.batch"}}},
			{"calls": []any{map[string]any{"kind": "fs.read", "path": map[string]any{"$future": 5, "$path": "x"}}}},
			{"calls": []any{map[string]any{"kind": "fs.stat", "path": "x"}, map[string]any{"kind": "fs.read", "path": map[string]any{"$future": 0, "$path": "result.nope"}}}}},
	}
}

// wrongValue is a value of a type other than f's.
func wrongValue(f primitive.Field) any {
	switch f.Type {
	case primitive.TString:
		return 12
	case primitive.TObject, primitive.TArray, primitive.TInteger, primitive.TNumber, primitive.TBoolean:
		return "not this type"
	}
	return nil
}

// TestErrorsSpeakHearth walks the error paths of every operation of every
// tool through a real Hearth and a real MCP client — schema validation
// (an unknown field, a missing required one, each field with a wrong
// type), each operation's own refusals (errorCases), the facade's (no
// operation, an unknown one), and every non-read operation under the
// e-stop and in read-only mode — and fails on any message in Go's or the operating system's
// words (hearthtest.GoPhrasing), in the answer, its result's items or its
// arrivals. The system's own text may appear only in details.system_error.
func TestErrorsSpeakHearth(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the cases use POSIX programs and paths")
	}
	hearthtest.FakeOpener(t)
	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "error-text")
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(in.Root, "file.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(in.Root, "dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A workbook that is not one, for xlsx_set.
	if err := os.WriteFile(filepath.Join(in.Root, "file.xlsx"), []byte("not a workbook"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A recipe whose step fails, for recipe.run.
	if r := c.Call("recipe", map[string]any{"operation": "create", "name": "fails", "steps": []any{
		map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "hearth-no-such-program"}}}}); r.IsError {
		t.Fatalf("create recipe: %s", r.Raw)
	}
	cases := errorCases(in.Root)
	errorsSeen := 0
	check := func(what string, r *hearthtest.Result) {
		t.Helper()
		env := r.Env
		// A call that needs the operator (process_kill) is approved, and a
		// call that went pending is followed to its arrival: the error the
		// model finally reads is what counts.
		if pid, _ := r.Get("permit_id").(string); pid != "" {
			if err := in.App.Operator.Approve(ctx, pid, "tester", nil); err != nil {
				t.Fatalf("%s: approve %s: %v", what, pid, err)
			}
		}
		if fid, _ := r.Get("future_id").(string); r.State() == "pending" && fid != "" {
			env, _ = c.WaitArrival(fid, r)["envelope"].(map[string]any)
		}
		walkMessages(env, "", func(at, msg string) {
			errorsSeen++
			if p := hearthtest.GoPhrasing(msg); p != "" {
				t.Errorf("%s: %s is in Go's or the system's words (%q): %q", what, at, p, msg)
			}
		})
		for _, a := range r.Arrivals() {
			walkMessages(a, "arrival", func(at, msg string) {
				if p := hearthtest.GoPhrasing(msg); p != "" {
					t.Errorf("%s: %s is in Go's or the system's words (%q): %q", what, at, p, msg)
				}
			})
		}
	}
	call := func(tool string, args map[string]any) {
		t.Helper()
		check(fmt.Sprintf("%s %v", tool, args), c.Call(tool, args))
	}

	var names []string
	for _, s := range in.App.Registry.All() {
		names = append(names, s.Name())
		in, ok := cases[s.Name()]
		if !ok {
			t.Errorf("%s has no error cases: add its error paths to errorCases (nil, with the reason, if it has none beyond validation)", s.Name())
		}
		if s.Name() == "machine.estop" {
			continue // it latches; done last
		}
		for _, input := range in {
			args := map[string]any{"operation": s.Operation}
			for k, v := range input {
				args[k] = v
			}
			call(s.Tool, args)
		}
		call(s.Tool, map[string]any{"operation": s.Operation, "no_such_field": 1})
		call(s.Tool, map[string]any{"operation": s.Operation})
		// Each field of the wrong type, the others as in the first case
		// (so that a missing required field does not answer first).
		for _, f := range s.Fields {
			args := map[string]any{"operation": s.Operation}
			if len(in) > 0 {
				for k, v := range in[0] {
					args[k] = v
				}
			}
			args[f.Name] = wrongValue(f)
			call(s.Tool, args)
		}
	}
	for _, tool := range in.App.Registry.Tools() {
		call(tool, map[string]any{})
		call(tool, map[string]any{"operation": "no_such_operation"})
		call(tool, map[string]any{"operation": 5})
	}
	for name := range cases {
		if _, ok := in.App.Registry.Lookup(name); !ok {
			t.Errorf("errorCases names %s, which is not an operation", name)
		}
	}

	// Under the e-stop, then in read-only mode, every non-read operation
	// is refused.
	refused := func() {
		for _, s := range in.App.Registry.All() {
			if s.Risk == primitive.RiskRead || s.Name() == "machine.estop" {
				continue
			}
			args := map[string]any{"operation": s.Operation}
			if ins := cases[s.Name()]; len(ins) > 0 {
				for k, v := range ins[0] {
					args[k] = v
				}
			}
			call(s.Tool, args)
		}
	}
	call("machine", map[string]any{"operation": "estop", "reason": "error-text test"})
	refused()
	if err := in.App.Operator.Reset(ctx, "tester"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.SetPolicy(ctx, "tester", "read-only"); err != nil {
		t.Fatal(err)
	}
	refused()
	sort.Strings(names)
	if errorsSeen < 3*len(names) {
		t.Fatalf("only %d error messages seen across %d operations: the walk is not reaching the error paths", errorsSeen, len(names))
	}
	t.Logf("%d error messages of %d operations checked", errorsSeen, len(names))
}

// walkMessages calls fn with every message a model reads in v: each
// "message", "error" and "reason" (a job's) string, at any depth, except the system's own
// text kept in details.system_error.
func walkMessages(v any, at string, fn func(at, msg string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			p := at + "." + k
			if k == "system_error" {
				continue
			}
			if s, ok := e.(string); ok && (k == "message" || k == "error" || k == "reason") {
				fn(p, s)
				continue
			}
			walkMessages(e, p, fn)
		}
	case []any:
		for i, e := range t {
			walkMessages(e, fmt.Sprintf("%s[%d]", at, i), fn)
		}
	}
}
