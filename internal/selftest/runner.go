package selftest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/selftestreport"
)

// check is one line of the selftest.
type check struct {
	name string
	// needs are checks that must have passed for this one to mean
	// anything; when one did not, this check is skipped and says which.
	needs []string
	run   func(ctx context.Context) (detail string, err error)
	// timeout bounds the check; 0 means checkTimeout.
	timeout time.Duration
}

// SkipError is a check's answer that it cannot run on this host; Reason
// says what probing found missing.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return "skipped: " + e.Reason }

// skip is the answer of a check that cannot run here.
func skip(format string, a ...any) error { return &SkipError{Reason: fmt.Sprintf(format, a...)} }

// checkTimeout bounds one check: far more than any takes on a working
// PC, so that a hung provider or scheduler is a FAIL, not a hung selftest.
const checkTimeout = 3 * time.Minute

// runChecks runs checks in order and hands each result to out. The skip
// rules: a check whose needs did not all pass is skipped naming the first
// that did not (with its reason when it was skipped itself); a check that
// returns a SkipError is skipped with its reason; any other error, a
// panic, or running past checkTimeout is a FAIL. Every detail passes
// through scrub.
func runChecks(ctx context.Context, checks []check, scrub *selftestreport.Scrubber, out func(selftestreport.Result)) {
	done := map[string]selftestreport.Result{}
	for _, c := range checks {
		res := selftestreport.Result{Name: c.name}
		if blocker, ok := unmet(c, done); ok {
			res.Status, res.Detail = selftestreport.Skipped, blocker
		} else {
			t0 := time.Now()
			detail, err := runOne(ctx, c)
			res.MS = time.Since(t0).Milliseconds()
			var se *SkipError
			switch {
			case errors.As(err, &se):
				res.Status, res.Detail = selftestreport.Skipped, se.Reason
			case err != nil:
				res.Status, res.Detail = selftestreport.Fail, err.Error()
			default:
				res.Status, res.Detail = selftestreport.OK, detail
			}
		}
		res.Detail = scrub.Scrub(oneLine(res.Detail))
		done[c.name] = res
		out(res)
	}
}

// unmet returns why c cannot run: the first of its needs that did not
// pass. A need that is not in the run at all is a defect of the check
// list, reported rather than ignored.
func unmet(c check, done map[string]selftestreport.Result) (string, bool) {
	for _, n := range c.needs {
		d, ok := done[n]
		switch {
		case !ok:
			return fmt.Sprintf("needs %s, which did not run before it", n), true
		case d.Status == selftestreport.Skipped && strings.HasPrefix(d.Detail, "needs "):
			// Skipped for want of something itself: name the root cause.
			return d.Detail, true
		case d.Status == selftestreport.Skipped:
			return fmt.Sprintf("needs %s: %s", n, d.Detail), true
		case d.Status != selftestreport.OK:
			return fmt.Sprintf("needs %s, which failed", n), true
		}
	}
	return "", false
}

// runOne runs c with its timeout; a panic in a check is its FAIL.
func runOne(ctx context.Context, c check) (detail string, err error) {
	timeout := c.timeout
	if timeout <= 0 {
		timeout = checkTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		detail string
		err    error
	}
	ch := make(chan answer, 1)
	go func() {
		var a answer
		defer func() {
			if p := recover(); p != nil {
				a = answer{err: fmt.Errorf("the check panicked: %v", p)}
			}
			ch <- a
		}()
		a.detail, a.err = c.run(ctx)
	}()
	select {
	case a := <-ch:
		return a.detail, a.err
	case <-ctx.Done():
		if parent.Err() != nil {
			return "", fmt.Errorf("interrupted: %w", parent.Err())
		}
		return "", fmt.Errorf("did not finish within %s", timeout)
	}
}

// oneLine keeps a detail on one printed line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
