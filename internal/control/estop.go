package control

import (
	"context"
	"log/slog"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/session"
)

// The e-stop is one act in two parts: governance latches it (every call
// admitted afterwards is refused, read from the database on each check,
// so a latch of another process refuses here too) and the engines stop
// what already runs. The operator's EStop and the model's machine.estop
// both do both.

// EStopJobReason is what a job killed by the e-stop reports.
const EStopJobReason = "cancelled by the e-stop; its process tree was killed"

// halt stops what runs when the e-stop latches: the engine's job class is
// held (its running jobs' process trees killed, nothing started until the
// operator resumes it), the dispatcher's running calls are cancelled,
// every interactive session is closed, its process tree killed, every
// app Hearth opened itself (ui.open) is killed with what it started, and
// every process Hearth adopted as the child subreaper is killed with its
// descendants (killAdopted): an app Hearth started and one a file opener
// such as xdg-open detached end alike.
func halt(ctx context.Context, gov *govern.Governor, engine *dispatch.Dispatcher, sessions *session.Manager, opened *proc.Started, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	engine.Hold(jobs.Class, dispatch.Stop{By: callpath.StoppedByEStop, Why: EStopJobReason})
	engine.CancelRunning(dispatch.ErrEStop)
	sessions.CloseAll(ctx, session.ReasonEStop)
	n, err := opened.Kill()
	if n > 0 {
		log.Warn("e-stop: killed the apps Hearth opened and what they started", "count", n)
	}
	if err != nil {
		log.Error("e-stop: kill the apps Hearth opened", "err", err)
	}
	killAdopted(gov, log)
}

// adoptedSweeps are the delays, after the e-stop, of the first sweeps for
// processes adopted after the first one: a running call's tree is killed
// by its own goroutine once it sees its cancellation, and a process that
// left that tree (setsid) just as its parent died is adopted only then.
// After the last, a sweep runs every adoptedSweepEvery while the stop
// stays latched: a child Hearth started and still waits for (a running
// call's that ignores its cancellation) may end at any later time and
// leave what it started to Hearth.
var adoptedSweeps = []time.Duration{50 * time.Millisecond, 250 * time.Millisecond, time.Second}

// adoptedSweepEvery is the rate of the sweeps after adoptedSweeps.
const adoptedSweepEvery = time.Second

// killAdopted kills, at once and in later sweeps for as long as the
// e-stop stays latched, what programs Hearth ran left behind outside the
// trees the e-stop kills: started with setsid -f, double-forked or
// nohup'd after their parent exited, they were re-parented to Hearth (the
// child subreaper, peeruser.AdoptOrphans). Every one of them descends
// from work Hearth ran for the model: Hearth's own children (the tunnel
// client) are started and waited for, and are never adopted. The sweeps
// end when the stop is reset, when another press takes them over (each
// press starts its own, so one runs per latch), or when the latch can no
// longer be read (the app closed its store): no goroutine outlives the
// app or the stop.
func killAdopted(gov *govern.Governor, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Each sweep takes only what started before its look at the latch:
	// a reset just after that look must not cost what runs after it.
	sweep := func(cutoff time.Time) {
		n, err := proc.KillAdopted(cutoff)
		if n > 0 {
			log.Warn("e-stop: killed processes that had left the programs Hearth ran", "count", n)
		}
		if err != nil {
			log.Error("e-stop: kill the processes Hearth adopted", "err", err)
		}
	}
	sweep(time.Now())
	first, err := gov.EStop(context.Background())
	if err != nil || !first.Latched {
		return
	}
	presses := len(first.Later) + first.Dropped
	go func() {
		last := time.Duration(0)
		for i := 0; ; i++ {
			d := last + adoptedSweepEvery
			if i < len(adoptedSweeps) {
				d = adoptedSweeps[i]
			}
			time.Sleep(d - last)
			last = d
			// A reset meanwhile ends the sweeps: what runs after it
			// was started after it. A later press runs its own.
			looked := time.Now()
			st, err := gov.EStop(context.Background())
			if err != nil || !st.Latched || !st.At.Equal(first.At) || len(st.Later)+st.Dropped != presses {
				return
			}
			sweep(looked)
		}
	}()
}

// EStopSpec is machine.estop, the model's emergency stop: a trusted stop
// that needs no permit and works in every mode. It latches through gov
// and stops running work through the dispatcher running the call
// (dispatch.WithEngine), its job class included, sessions, and the apps
// Hearth opened (opened, required).
func EStopSpec(gov *govern.Governor, sessions *session.Manager, opened *proc.Started, log *slog.Logger) *primitive.Spec {
	return &primitive.Spec{Tool: "machine", Operation: "estop", Risk: primitive.RiskControl, Inline: true,
		Summary: "emergency stop: refuse every non-read call and kill running work until the human operator resets it. Always allowed.",
		Fields:  []primitive.Field{{Name: "reason", Type: primitive.TString, Desc: "Why the stop was triggered (shown to the operator)."}},
		Run: dispatch.WithEngine(func(ctx context.Context, e *dispatch.Dispatcher, _ *primitive.Call, in struct {
			Reason string `json:"reason"`
		}) (any, error) {
			if err := gov.Latch(context.WithoutCancel(ctx), "model", in.Reason); err != nil {
				return nil, primitive.Failed("estop_failed", "%v", err)
			}
			halt(ctx, gov, e, sessions, opened, log)
			return map[string]any{"latched": true, "reason": in.Reason, "reset": "only the operator can reset it (control panel or `hearth-tray safety reset`)"}, nil
		})}
}
