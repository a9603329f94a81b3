package platform

import (
	"log/slog"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// memoryLimitRatio is the share of a container's memory limit the Go heap is held to:
// the rest is for stacks, mapped data files and what the runtime does not count. Indexing
// 100k realistic chunks fitted a 4 GiB limit with 3 GiB (docs/operations.md).
const memoryLimitRatio = 0.75

// SetMemoryLimit sets the runtime's soft memory limit (GOMEMLIMIT) to three quarters of
// the limit provider reports, the cgroup's in production: without it the heap grows to
// twice its live size before collecting, and a pod is killed at its limit instead of
// collecting sooner. An explicit GOMEMLIMIT wins, AUTOMEMLIMIT=off disables it, and with
// no limit nothing changes. It returns the limit in force (math.MaxInt64: none).
func SetMemoryLimit(log *slog.Logger, provider memlimit.Provider) int64 {
	limit, err := memlimit.Set(memlimit.WithRatio(memoryLimitRatio), memlimit.WithProvider(provider), memlimit.WithLogger(log))
	if err != nil {
		log.Warn("memory limit not set from the cgroup", "err", err)
	}
	return limit
}
