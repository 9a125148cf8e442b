//go:build !linux

package proc

import "time"

// KillAdopted kills nothing here: only Linux has child subreapers. On
// Windows every process a child starts stays in its Job Object, which
// the tree kill and the job's kill-on-close end.
func KillAdopted(cutoff time.Time) (int, error) { return 0, nil }
