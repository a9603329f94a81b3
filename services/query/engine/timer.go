package engine

import (
	"sync"
	"time"
)

// timer records phase durations in milliseconds (a response's timings_ms). A step run in
// sequence is marked when it ends; the searches of a concurrent step each record their
// own duration, so phases that ran side by side may add up to more than "total".
type timer struct {
	mu    sync.Mutex
	start time.Time
	last  time.Time
	m     map[string]float64
}

func newTimer() *timer {
	now := time.Now()
	return &timer{start: now, last: now, m: map[string]float64{}}
}

// mark ends a sequential phase: its duration is the time since the previous mark.
func (t *timer) mark(phase string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.m[phase] += ms(now.Sub(t.last))
	t.last = now
}

// timed runs fn and adds its duration to phase; safe for concurrent use.
func (t *timer) timed(phase string, fn func() error) error {
	start := time.Now()
	err := fn()
	d := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[phase] += ms(d)
	return err
}

// resume ends a concurrent step: the next mark measures from now.
func (t *timer) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = time.Now()
}

func (t *timer) done() map[string]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m["total"] = ms(time.Since(t.start))
	return t.m
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
