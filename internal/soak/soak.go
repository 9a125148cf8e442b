// Package soak is Hearth's soak suite: a real `hearth-tray serve` under
// concurrent go-sdk clients for a while, one kill -9 under load and a
// restart, the bad-input corpus, and many stalled large bodies. It checks
// that nothing errs, no acknowledged future or job is lost, no file is torn,
// the ledger verifies, memory stays under its bounds and file descriptors
// come back, and prints its figures.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options size one soak run.
type Options struct {
	Bin      string        // hearth-tray binary
	Clients  int           // concurrent MCP clients
	Duration time.Duration // load duration; the kill -9 is at its middle
	Stalled  int           // stalled bodies
	NoKill   bool          // skip the kill -9 (to tell its effects apart)
	// StalledBytes is each stalled body's declared size.
	StalledBytes int64
	// RSSStalledMax bounds RSS while the bodies stall; RSSLoadMax after
	// the load; RSSBackSlack is how near the pre-stall RSS it must come
	// back, within RSSBackWithin.
	RSSStalledMax, RSSLoadMax, RSSBackSlack int64
	RSSBackWithin                           time.Duration
	// FDSlack is how many file descriptors above the baseline count as
	// back.
	FDSlack int
	Log     io.Writer
}

// Defaults are the CI form.
func Defaults() Options {
	return Options{Clients: 32, Duration: 30 * time.Second, Stalled: 100, StalledBytes: 4 << 20,
		RSSStalledMax: 100 << 20, RSSLoadMax: 150 << 20, RSSBackSlack: 30 << 20, RSSBackWithin: 30 * time.Second,
		FDSlack: 4, Log: os.Stdout}
}

// Report holds the figures of a run.
type Report struct {
	Calls, Errors, Excused, Pending int64
	Reconciled                      int64
	Notes                           []string
	Tracked, Arrived                int64
	Reads, TornReads                int64
	FilesChecked, FilesTorn         int
	CorpusSent                      int
	CorpusProblems                  []string
	FirstErrors                     []string
	VerifyAfterCrash                string
	VerifyAfterCrashOK              bool
	VerifyAtEnd                     string
	VerifyAtEndOK                   bool
	RSSBaseline, RSSAfterLoad       int64
	RSSPreStall, RSSStalledPeak     int64
	RSSAfterStall                   int64
	RSSBackAfter                    time.Duration
	StalledRefused                  int
	FDBaseline, FDWarm, FDEnd       int
	DBBytes                         int64
	Failures                        []string
}

func (r *Report) failf(format string, a ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, a...))
}

// Run runs one soak.
func Run(ctx context.Context, o Options) (*Report, error) {
	logf := func(format string, a ...any) { fmt.Fprintf(o.Log, "soak: "+format+"\n", a...) }
	work, err := os.MkdirTemp("", "hearth-soak-")
	if err != nil {
		return nil, err
	}
	if os.Getenv("HEARTH_SOAK_KEEP") == "" {
		defer os.RemoveAll(work)
	} else {
		logf("work directory kept: %s", work)
	}
	home, root := filepath.Join(work, "home"), filepath.Join(work, "files")
	for _, d := range []string{home, root} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := writeConfig(home, root); err != nil {
		return nil, err
	}
	srv, err := startServe(ctx, o.Bin, home)
	if err != nil {
		return nil, err
	}
	defer func() { srv.kill() }()
	logf("serve pid %d at %s", srv.pid(), srv.url)
	rep := &Report{}
	hc := &http.Client{Timeout: 60 * time.Second}

	// ---- load, with one kill -9 in the middle ----
	stats := &loadStats{}
	out := &outage{}
	out.set(false)
	clients := make([]*client, o.Clients)
	for i := range clients {
		clients[i] = &client{id: i, url: srv.url, file: filepath.Join(root, fmt.Sprintf("c%d.txt", i)), stats: stats, out: out,
			http: &http.Client{Timeout: 90 * time.Second}, waiting: map[string]bool{}, early: map[string]bool{}, known: map[string]bool{}, seen: map[string]int{}}
	}
	loadCtx, stopLoad := context.WithTimeout(ctx, o.Duration)
	defer stopLoad()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for loadCtx.Err() == nil {
				if out.isDown() {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				// A call is never abandoned half-way: its answer may carry
				// arrivals, which the next distinct request acknowledges.
				c.step(ctx)
			}
		}()
	}
	select {
	case <-time.After(o.Duration / 2):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if !o.NoKill {
		out.set(true)
		logf("kill -9 of serve pid %d under load (%d calls so far)", srv.pid(), stats.calls.Load())
		srv.kill()
		rep.VerifyAfterCrash, err = ledgerVerify(ctx, o.Bin, home)
		rep.VerifyAfterCrashOK = err == nil
		if srv, err = startServe(ctx, o.Bin, home); err != nil {
			return nil, fmt.Errorf("restart after kill -9: %w", err)
		}
		logf("restarted: serve pid %d", srv.pid())
	}
	if rep.RSSBaseline, err = rssBytes(srv.pid()); err != nil {
		return nil, err
	}
	if rep.FDBaseline, err = fdCount(srv.pid()); err != nil {
		return nil, err
	}
	out.set(false)
	wg.Wait()
	stopLoad()
	// Every acknowledged future and job arrives.
	drainBy := time.Now().Add(60 * time.Second)
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.drain(ctx, drainBy)
		}()
	}
	wg.Wait()
	for _, c := range clients {
		if c.session != nil {
			c.session.Close()
		}
		c.http.CloseIdleConnections()
	}
	rep.Calls, rep.Errors, rep.Excused, rep.Pending = stats.calls.Load(), stats.errors.Load(), stats.excused.Load(), stats.pending.Load()
	rep.Tracked, rep.Arrived = stats.tracked.Load(), stats.arrived.Load()
	rep.Reads, rep.TornReads = stats.reads.Load(), stats.torn.Load()
	rep.FirstErrors, rep.Notes = stats.firstErrors, stats.notes
	rep.Reconciled = stats.reconciled.Load()
	rep.FilesChecked, rep.FilesTorn = checkFiles(root, o.Clients)
	if rep.RSSAfterLoad, err = rssBytes(srv.pid()); err != nil {
		return nil, err
	}
	// The database's read pool has grown to what the load needed: the
	// descriptors to come back to are counted now, once the clients have
	// hung up.
	time.Sleep(time.Second)
	if rep.FDWarm, err = fdCount(srv.pid()); err != nil {
		return nil, err
	}
	logf("load: %d calls by %d clients in %s, %d errors, %d excused by the outage, %d pending; %d/%d futures and jobs arrived",
		rep.Calls, o.Clients, o.Duration, rep.Errors, rep.Excused, rep.Pending, rep.Arrived, rep.Tracked)

	// ---- the bad-input corpus ----
	var problems []corpusResult
	rep.CorpusSent, problems = sendCorpus(hc, srv.url, root)
	for _, p := range problems {
		rep.CorpusProblems = append(rep.CorpusProblems, p.name+": "+p.problem)
	}
	logf("corpus: %d hostile requests, %d answered wrongly", rep.CorpusSent, len(problems))

	// ---- stalled bodies ----
	runtimeSettle := func() { time.Sleep(2 * time.Second) }
	runtimeSettle()
	if rep.RSSPreStall, err = rssBytes(srv.pid()); err != nil {
		return nil, err
	}
	refused, closeAll, err := stallBodies(srv.url, o.Stalled, o.StalledBytes)
	if err != nil {
		return nil, err
	}
	rep.StalledRefused = refused
	for range 4 {
		if r, err := rssBytes(srv.pid()); err == nil && r > rep.RSSStalledPeak {
			rep.RSSStalledPeak = r
		}
		time.Sleep(500 * time.Millisecond)
	}
	closeAll()
	ended := time.Now()
	for {
		r, err := rssBytes(srv.pid())
		if err != nil {
			return nil, err
		}
		rep.RSSAfterStall = r
		if r <= rep.RSSPreStall+o.RSSBackSlack || time.Since(ended) > o.RSSBackWithin {
			rep.RSSBackAfter = time.Since(ended)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	logf("stalled bodies: %d × %.0f MiB, %d refused at once; RSS %.0f MiB before, peak %.0f MiB, %.0f MiB %.1f s after they ended",
		o.Stalled, mib(o.StalledBytes), refused, mib(rep.RSSPreStall), mib(rep.RSSStalledPeak), mib(rep.RSSAfterStall), rep.RSSBackAfter.Seconds())

	// ---- file descriptors back ----
	hc.CloseIdleConnections()
	fdBy := time.Now().Add(30 * time.Second)
	for {
		if rep.FDEnd, err = fdCount(srv.pid()); err != nil {
			return nil, err
		}
		if rep.FDEnd <= rep.FDWarm+o.FDSlack || time.Now().After(fdBy) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}

	// ---- clean stop, verify ----
	if err := srv.stop(); err != nil {
		rep.failf("clean stop: %v", err)
	}
	rep.VerifyAtEnd, err = ledgerVerify(ctx, o.Bin, home)
	rep.VerifyAtEndOK = err == nil
	if st, err := os.Stat(filepath.Join(home, "hearth.db")); err == nil {
		rep.DBBytes = st.Size()
	}
	judge(rep, o)
	return rep, nil
}

// judge records every bound the run did not hold.
func judge(rep *Report, o Options) {
	if rep.Errors > 0 {
		rep.failf("%d errors (first: %s)", rep.Errors, strings.Join(rep.FirstErrors, " | "))
	}
	if rep.Arrived != rep.Tracked {
		rep.failf("%d of %d acknowledged futures and jobs never arrived", rep.Tracked-rep.Arrived, rep.Tracked)
	}
	if rep.TornReads > 0 || rep.FilesTorn > 0 {
		rep.failf("torn files: %d reads, %d files on disk", rep.TornReads, rep.FilesTorn)
	}
	if len(rep.CorpusProblems) > 0 {
		rep.failf("bad-input corpus: %s", strings.Join(rep.CorpusProblems, " | "))
	}
	// A checkpoint is signed at every start, so the ledger a kill -9 left
	// behind verifies like any other.
	if !rep.VerifyAfterCrashOK {
		rep.failf("ledger verify after kill -9: %s", rep.VerifyAfterCrash)
	}
	if !rep.VerifyAtEndOK {
		rep.failf("ledger verify after the clean stop: %s", rep.VerifyAtEnd)
	}
	if rep.RSSStalledPeak > o.RSSStalledMax {
		rep.failf("RSS with %d stalled bodies %.0f MiB > %.0f MiB", o.Stalled, mib(rep.RSSStalledPeak), mib(o.RSSStalledMax))
	}
	if rep.RSSAfterStall > rep.RSSPreStall+o.RSSBackSlack {
		rep.failf("RSS %.0f MiB %s after the stalled bodies ended, not back within %.0f MiB of %.0f MiB",
			mib(rep.RSSAfterStall), o.RSSBackWithin, mib(o.RSSBackSlack), mib(rep.RSSPreStall))
	}
	if rep.RSSAfterLoad > o.RSSLoadMax {
		rep.failf("RSS after the load %.0f MiB > %.0f MiB", mib(rep.RSSAfterLoad), mib(o.RSSLoadMax))
	}
	if rep.FDEnd > rep.FDWarm+o.FDSlack {
		rep.failf("file descriptors %d at the end, %d after the load", rep.FDEnd, rep.FDWarm)
	}
}

// Print writes the figures.
func (r *Report) Print(w io.Writer, o Options) {
	fmt.Fprintf(w, "soak figures (%d clients × %s, one kill -9, %d stalled %.0f MiB bodies):\n", o.Clients, o.Duration, o.Stalled, mib(o.StalledBytes))
	fmt.Fprintf(w, "  calls %d, errors %d, transport errors excused by the outage %d, pending answers %d\n", r.Calls, r.Errors, r.Excused, r.Pending)
	fmt.Fprintf(w, "  UNKNOWN outcomes of the crash reconciled %d\n", r.Reconciled)
	fmt.Fprintf(w, "  futures and jobs acknowledged %d, arrived %d\n", r.Tracked, r.Arrived)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "    %s\n", n)
	}
	fmt.Fprintf(w, "  file reads checked %d (torn %d); files on disk checked %d (torn %d)\n", r.Reads, r.TornReads, r.FilesChecked, r.FilesTorn)
	fmt.Fprintf(w, "  bad-input corpus %d requests, %d answered wrongly\n", r.CorpusSent, len(r.CorpusProblems))
	crash := okText(r.VerifyAfterCrashOK)
	fmt.Fprintf(w, "  ledger verify after kill -9: %s — %s\n", crash, firstLine(r.VerifyAfterCrash))
	fmt.Fprintf(w, "  ledger verify after the clean stop: %s — %s\n", okText(r.VerifyAtEndOK), firstLine(r.VerifyAtEnd))
	fmt.Fprintf(w, "  RSS: %.0f MiB after restart, %.0f MiB after the load (bound %.0f)\n", mib(r.RSSBaseline), mib(r.RSSAfterLoad), mib(o.RSSLoadMax))
	fmt.Fprintf(w, "  RSS: %.0f MiB before the stalled bodies, peak %.0f MiB while they stall (bound %.0f; %d refused with 503), %.0f MiB %.1f s after they ended\n",
		mib(r.RSSPreStall), mib(r.RSSStalledPeak), mib(o.RSSStalledMax), r.StalledRefused, mib(r.RSSAfterStall), r.RSSBackAfter.Seconds())
	fmt.Fprintf(w, "  file descriptors: %d after restart, %d after the load with its clients gone, %d after the corpus and the stalled bodies\n", r.FDBaseline, r.FDWarm, r.FDEnd)
	fmt.Fprintf(w, "  hearth.db: %.1f MiB\n", mib(r.DBBytes))
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  FAIL: %s\n", f)
	}
	if len(r.Failures) == 0 {
		fmt.Fprintln(w, "  PASS")
	}
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAILED"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ErrFailed is Run's verdict when a bound did not hold.
var ErrFailed = errors.New("soak: a bound did not hold")
