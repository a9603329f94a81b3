//go:build unix

package proccpu

import (
	"syscall"
	"time"
)

// Used is the CPU time (user and system) this process has used so far; 0 when
// the system does not say.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
