package app

import (
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/machine"
)

// newJobs builds the durable job queue: the job class of the dispatcher
// (its EngineClass is among the classes the dispatcher is built with), so
// each job is a future the one engine schedules, admits, journals,
// recovers and delivers. Jobs run through m, their own machine.Machine
// (newMachine), with the same output bounds and spill rules as
// machine.exec; the class's slots are max_concurrent_jobs, so queued work
// never takes the slots of interactive exec calls (and vice versa). Its
// task.* primitives receive the dispatcher running them with each call.
//
// Governance: the queue starts nothing while the operator holds it (the
// hold is read from the database, so it survives a restart); the e-stop
// kills running jobs and holds the queue; the operator's resume releases
// it (both through internal/control).
func (a *App) newJobs(cfg config.Config, m *machine.Machine) *jobs.Queue {
	return &jobs.Queue{
		DB:             a.DB,
		Exec:           m.Exec,
		MaxConcurrent:  cfg.MaxConcurrentJobs,
		DefaultTimeout: m.DefaultTimeout,
		MaxTimeout:     m.MaxTimeout,
		Held:           a.Gov.QueueHeld,
	}
}
