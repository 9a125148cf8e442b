//go:build !unix

package fsops

import "time"

// cpuUsed is not measured here: the benchmarks report the clock only.
func cpuUsed() time.Duration { return 0 }
