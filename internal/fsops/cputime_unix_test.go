//go:build unix

package fsops

import (
	"syscall"
	"time"
)

// cpuUsed is the processor time this process and the children it has
// waited for have used so far (user and system). A benchmark reports it
// beside the time on the clock: on a machine shared with other work the
// clock measures the others too.
func cpuUsed() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}
