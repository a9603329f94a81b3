package platform

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// memoryLimitRatio is the share of a container's memory limit the Go heap is held to:
// the rest is for stacks, mapped data files and what the runtime does not count. Indexing
// 100k realistic chunks fitted a 4 GiB limit with 3 GiB (docs/operations.md).
const memoryLimitRatio = 0.75

// gcPercentWithoutLimit is the collector's GOGC when no memory limit applies (a laptop
// running `graphrag up`): the heap grows to 1.5 times its live size before a collection
// instead of twice. Indexing 100k realistic chunks peaked at 3.73 GiB of anonymous
// memory with the default 100 for a live heap of at most 1.73 GB (ADR 0046).
const gcPercentWithoutLimit = 50

// SetMemoryLimit sets the runtime's soft memory limit (GOMEMLIMIT) to three quarters of
// the limit provider reports, the cgroup's in production: without it the heap grows to
// twice its live size before collecting, and a pod is killed at its limit instead of
// collecting sooner. An explicit GOMEMLIMIT wins, AUTOMEMLIMIT=off disables it. With no
// limit at all, the collector runs at GOGC 50 unless GOGC is set. It returns the limit in
// force (math.MaxInt64: none).
func SetMemoryLimit(log *slog.Logger, provider memlimit.Provider) int64 {
	limit, err := memlimit.Set(memlimit.WithRatio(memoryLimitRatio), memlimit.WithProvider(provider), memlimit.WithLogger(log))
	if err != nil {
		log.Warn("memory limit not set from the cgroup", "err", err)
	}
	if limit == math.MaxInt64 {
		if _, set := os.LookupEnv("GOGC"); !set {
			debug.SetGCPercent(gcPercentWithoutLimit)
			log.Debug("no memory limit: the collector runs at GOGC 50", "gogc", gcPercentWithoutLimit)
		}
	}
	return limit
}
