//go:build unix

package bench

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is the peak resident set of an exited child in bytes (getrusage's ru_maxrss:
// kilobytes on Linux, bytes on Darwin); 0 when unknown.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss << 10
}
