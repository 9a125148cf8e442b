package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// This file holds the demo steps of work that runs later (futures): a
// scatter with a reference, jobs across a restart, a detached arrival and
// a recipe. allSteps (steps.go) lists every step in order.

func (d *demo) scatter(ctx context.Context) (string, error) {
	file := filepath.Join(d.root, "scatter.txt")
	const content = "read through a $future reference\n"
	if _, err := d.completed(ctx, "fs.write", "fs", map[string]any{"operation": "write", "path": file, "data": content}, nil); err != nil {
		return "", err
	}
	r, err := d.c.call(ctx, "run", map[string]any{"operation": "scatter", "calls": []any{
		map[string]any{"kind": "fs.stat", "path": file},
		map[string]any{"kind": "fs.read", "path": map[string]any{"$future": 0, "$path": "result.path"}},
	}}, nil)
	if err != nil {
		return "", err
	}
	futures, _ := r.Get("result.futures").([]any)
	if r.IsError || len(futures) != 2 {
		return "", expect(false, r, "run.scatter must answer two futures")
	}
	var envs []map[string]any
	var ids []string
	for _, f := range futures {
		id, _ := jsonx.GetPath(f, "future_id").(string)
		env, err := d.c.await(ctx, id, 30*time.Second)
		if err != nil {
			return "", err
		}
		ids, envs = append(ids, id), append(envs, env)
	}
	if jsonx.GetPath(envs[0], "state") != "completed" || jsonx.GetPath(envs[1], "state") != "completed" {
		return "", fmt.Errorf("scatter results: stat %v, read %v", jsonx.GetPath(envs[0], "state"), jsonx.GetPath(envs[1], "state"))
	}
	if got := jsonx.GetPath(envs[1], "result.data"); got != content {
		return "", fmt.Errorf("fs.read through the reference returned %q, want %q", got, content)
	}
	return fmt.Sprintf("run.scatter [fs.stat, fs.read {\"$future\":0,\"$path\":\"result.path\"}] → futures %s, %s; both arrived, the read returned the stat'ed file's %d bytes",
		ids[0], ids[1], len(content)), nil
}

// jobTimes reads a job through task.get.
func (d *demo) jobTimes(ctx context.Context, id string) (state string, started, finished time.Time, attempts int, err error) {
	r, err := d.c.call(ctx, "task", map[string]any{"operation": "get", "id": id}, nil)
	if err != nil {
		return "", time.Time{}, time.Time{}, 0, err
	}
	if r.IsError {
		return "", time.Time{}, time.Time{}, 0, expect(false, r, "task.get %s", id)
	}
	state = r.Str("result.job.state")
	started, _ = time.Parse(time.RFC3339Nano, r.Str("result.job.started_at"))
	finished, _ = time.Parse(time.RFC3339Nano, r.Str("result.job.finished_at"))
	a, _ := r.Get("result.job.attempts").(float64)
	return state, started, finished, int(a), nil
}

func (d *demo) jobsAcrossRestart(ctx context.Context) (string, error) {
	log := filepath.Join(d.root, jobsLogName)
	parent := d.job("log", "parent")
	dependent := d.job("log", "dependent")
	dependent["dependencies"] = []any{0}
	dependent["delay_ms"] = jobDelay.Milliseconds()
	env, err := d.completed(ctx, "task.submit of two jobs", "task", map[string]any{"operation": "submit", "jobs": []any{parent, dependent}}, nil)
	if err != nil {
		return "", err
	}
	ids, _ := jsonx.GetPath(env, "result.ids").([]any)
	if len(ids) != 2 {
		return "", fmt.Errorf("task.submit of two jobs answered %d ids", len(ids))
	}
	p, dep := ids[0].(string), ids[1].(string)
	w, err := d.c.call(ctx, "task", map[string]any{"operation": "wait", "id": p, "timeout_ms": 20000}, nil)
	for i := 0; err == nil && i < 2 && (w.Str("result.job.state") == "queued" || w.Str("result.job.state") == "running"); i++ {
		// task.wait also returns when the job starts; wait again for its end.
		w, err = d.c.call(ctx, "task", map[string]any{"operation": "wait", "id": p, "timeout_ms": 20000}, nil)
	}
	if err != nil {
		return "", err
	}
	if w.Str("result.job.state") != "completed" {
		return "", expect(false, w, "parent job %s", p)
	}
	st, _, _, _, err := d.jobTimes(ctx, dep)
	if err != nil {
		return "", err
	}
	if st != "queued" {
		return "", fmt.Errorf("the dependent job is %s before the restart, want queued (delay_ms %d)", st, jobDelay.Milliseconds())
	}
	oldURL := d.app().MCPURL()
	t0 := time.Now()
	if err := d.stop(); err != nil {
		return "", fmt.Errorf("stop Hearth: %w", err)
	}
	if err := d.start(ctx); err != nil {
		return "", fmt.Errorf("restart Hearth: %w", err)
	}
	restart := time.Since(t0)
	env, err = d.c.await(ctx, dep, 30*time.Second)
	if err != nil {
		return "", fmt.Errorf("after the restart: %w", err)
	}
	if jsonx.GetPath(env, "state") != "completed" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("dependent job after the restart: %.300s", b)
	}
	if _, err := d.c.await(ctx, p, 10*time.Second); err != nil {
		return "", fmt.Errorf("parent job's result: %w", err)
	}
	ps, _, pf, _, err := d.jobTimes(ctx, p)
	if err != nil {
		return "", err
	}
	ds, dstart, _, attempts, err := d.jobTimes(ctx, dep)
	if err != nil {
		return "", err
	}
	if ps != "completed" || ds != "completed" || attempts != 1 {
		return "", fmt.Errorf("jobs: parent %s, dependent %s after %d attempts", ps, ds, attempts)
	}
	if pf.IsZero() || dstart.IsZero() || dstart.Before(pf) {
		return "", fmt.Errorf("the dependent started %v, before its parent finished %v", dstart, pf)
	}
	if got, err := d.readFile(ctx, log); err != nil || got != "parent\ndependent\n" {
		return "", fmt.Errorf("jobs.log reads %q, want parent then dependent (%v)", got, err)
	}
	moved := ""
	if d.app().MCPURL() != oldURL {
		moved = " on a new port"
	}
	return fmt.Sprintf("jobs %s → %s (index dependency, delay_ms %d); parent done, Hearth stopped cleanly with the dependent queued and restarted on the same data directory%s in %d ms; the client reconnected; the dependent ran once, %d ms after its parent finished; both results arrived",
		p, dep, jobDelay.Milliseconds(), moved, restart.Milliseconds(), dstart.Sub(pf).Milliseconds()), nil
}

func (d *demo) detached(ctx context.Context) (string, error) {
	args := d.exec(d.root, "sleep-echo", "300", detachedText)
	args["detach"] = true
	t0 := time.Now()
	r, err := d.c.call(ctx, "machine", args, nil)
	if err != nil {
		return "", err
	}
	id := r.Str("future_id")
	if r.State() != "pending" || id == "" {
		return "", expect(false, r, "detach:true must answer pending with a future_id")
	}
	answered := time.Since(t0)
	deadline := time.Now().Add(20 * time.Second)
	later := 0
	for {
		if env, ok := d.c.arrivals[id]; ok {
			if jsonx.GetPath(env, "state") != "completed" || jsonx.GetPath(env, "result.stdout.text") != detachedText+"\n" {
				b, _ := json.Marshal(env)
				return "", fmt.Errorf("detached result: %.300s", b)
			}
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the detached result %s did not arrive within 20 s", id)
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := d.c.hostInfo(ctx); err != nil {
			return "", err
		}
		later++
	}
	return fmt.Sprintf("detach:true answered pending (%s) in %d ms; the result arrived %d ms later on a later call (host_info #%d), completed",
		id, answered.Milliseconds(), time.Since(t0).Milliseconds(), later), nil
}

func (d *demo) recipe(ctx context.Context) (string, error) {
	note := filepath.Join(d.root, "recipe-note.txt")
	steps := []any{
		map[string]any{"primitive": "machine.exec", "input": map[string]any{
			"command": d.exe, "args": []any{ChildArg, "echo", "hello, ${who}"}, "cwd": d.root}},
		map[string]any{"primitive": "fs.write", "input": map[string]any{"path": note, "data": "greeted ${who}\n"}},
	}
	r, err := d.c.call(ctx, "recipe", map[string]any{"operation": "create", "name": "demo-greet", "description": "greet someone and leave a note", "steps": steps}, nil)
	if err != nil {
		return "", err
	}
	if r.IsError || r.Get("result.params.0") != "who" {
		return "", expect(false, r, "recipe.create must find the parameter who")
	}
	env, err := d.completed(ctx, "recipe.run", "recipe", map[string]any{"operation": "run", "name": "demo-greet", "params": map[string]any{"who": greeted}}, nil)
	if err != nil {
		return "", err
	}
	if jsonx.GetPath(env, "result.state") != "completed" || jsonx.GetPath(env, "result.steps.0.result.stdout.text") != "hello, the operator\n" {
		b, _ := json.Marshal(env)
		return "", fmt.Errorf("recipe run: %.400s", b)
	}
	if got, err := d.readFile(ctx, note); err != nil || got != "greeted the operator\n" {
		return "", fmt.Errorf("the recipe's note reads %q (%v)", got, err)
	}
	return "recipe demo-greet (machine.exec, fs.write) created with parameter who; run with who=\"the operator\": both steps completed, each governed as its own call", nil
}
