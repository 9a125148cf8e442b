package app

import (
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/machine"
)

// newJobs builds the durable job queue. Jobs run through their own
// machine.Machine, with the same output bounds and spill rules as
// machine.exec but with max_concurrent_jobs slots, so queued work never
// takes the slots of interactive exec calls (and vice versa). Its
// Dispatcher is set once the dispatcher exists.
func (a *App) newJobs(cfg config.Config) *jobs.Queue {
	m := machine.New(cfg.MaxConcurrentJobs)
	m.Artifacts = a.Artifacts
	m.MaxOutputBytes = cfg.MaxOutputBytes
	m.MaxCaptureBytes = cfg.MaxArtifactBytes
	m.DefaultTimeout = time.Duration(cfg.ExecTimeoutMS) * time.Millisecond
	m.MaxTimeout = time.Duration(cfg.MaxExecTimeoutMS) * time.Millisecond
	return &jobs.Queue{
		DB:             a.DB,
		Exec:           m.Exec,
		Log:            a.Log,
		MaxConcurrent:  cfg.MaxConcurrentJobs,
		DefaultTimeout: m.DefaultTimeout,
		MaxTimeout:     m.MaxTimeout,
	}
}
