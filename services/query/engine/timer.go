package engine

import "time"

// timer records phase durations in milliseconds (a response's timings_ms): each phase
// is marked when it ends.
type timer struct {
	start time.Time
	last  time.Time
	m     map[string]float64
}

func newTimer() *timer {
	now := time.Now()
	return &timer{start: now, last: now, m: map[string]float64{}}
}

// mark ends a phase: its duration is the time since the previous mark.
func (t *timer) mark(phase string) {
	now := time.Now()
	t.m[phase] += ms(now.Sub(t.last))
	t.last = now
}

func (t *timer) done() map[string]float64 {
	t.m["total"] = ms(time.Since(t.start))
	return t.m
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
