package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/schema"
)

// Rates. Every replica of a stage counts the messages it handled per corpus over the
// last RateWindow, in rateSlots slots of rateFlush, and records the counts in
// schema.LeaseBucket under rate.<stage>.<replica> every rateFlush while it has any
// (entries there expire LeaseTTL after their last write: a replica that dies leaves no
// record for long). GetStatus sums the records of a stage into its rate and, with the
// messages left, an ETA.
const (
	ratePrefix = "rate."
	// RateWindow is how far back a stage's rate looks.
	RateWindow = time.Minute
	rateFlush  = 5 * time.Second
	rateSlots  = int(RateWindow / rateFlush)
)

// RateRecord is what one replica of a stage records of its recent work.
type RateRecord struct {
	Stage string `json:"stage"`
	// Seconds is the span the counts cover: RateWindow, or less for a replica that
	// started counting more recently.
	Seconds float64 `json:"seconds"`
	// Handled counts, per corpus, the messages the replica handled in that span.
	Handled map[string]uint64 `json:"handled"`
}

// rateMeter counts handled messages per corpus in slots of rateFlush, the newest last.
type rateMeter struct {
	mu     sync.Mutex
	slots  []map[string]uint64
	starts []time.Time // of each slot
}

func newRateMeter(now time.Time) *rateMeter {
	return &rateMeter{slots: []map[string]uint64{{}}, starts: []time.Time{now}}
}

func (m *rateMeter) add(corpus string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.slots[len(m.slots)-1][corpus]++
}

// rotate starts a new slot at now, dropping the oldest past rateSlots, and returns the
// counts of the slots kept and the span they cover.
func (m *rateMeter) rotate(now time.Time) (map[string]uint64, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.slots = append(m.slots, map[string]uint64{})
	m.starts = append(m.starts, now)
	if len(m.slots) > rateSlots+1 { // the window, and the slot just begun
		m.slots, m.starts = m.slots[1:], m.starts[1:]
	}
	sum := map[string]uint64{}
	for _, s := range m.slots {
		for c, n := range s {
			sum[c] += n
		}
	}
	return sum, now.Sub(m.starts[0])
}

// reportRates records the meter's counts under key every rateFlush (every) while there are
// any, and removes the record once there are none, or when ctx ends.
func reportRates(ctx context.Context, b *bus.Bus, key, stage string, m *rateMeter, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	var kv bus.KV
	written := false
	for {
		select {
		case <-ctx.Done():
			if written && kv != nil {
				dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				_ = kv.Delete(dctx, key)
				cancel()
			}
			return
		case <-t.C:
		}
		handled, span := m.rotate(time.Now())
		var err error
		if kv == nil {
			kv, err = b.KV(ctx, schema.LeaseBucket)
		}
		switch {
		case err != nil:
		case len(handled) > 0:
			v, _ := json.Marshal(RateRecord{Stage: stage, Seconds: span.Seconds(), Handled: handled})
			if err = kv.Put(ctx, key, v); err == nil {
				written = true
			}
		case written:
			if err = kv.Delete(ctx, key); err == nil {
				written = false
			}
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("recording the stage's rate", "stage", stage, "err", err)
		}
	}
}

// replicaKey names a record of this process's replica of stage under prefix.
func replicaKey(prefix, stage string) string {
	host, _ := os.Hostname()
	return prefix + stage + "." + keyUnsafe.ReplaceAllString(host, "_") + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64()%1e6, 10)
}

// StageRates returns, per stage, the messages of corpus handled per second over the
// last RateWindow, summed over the stage's replicas.
func StageRates(ctx context.Context, b *bus.Bus, corpus string) (map[string]float64, error) {
	kv, err := b.KV(ctx, schema.LeaseBucket)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading stage rates: %w", err)
	}
	keys, err := kv.Keys(ctx, ratePrefix)
	if err != nil {
		return nil, fmt.Errorf("reading stage rates: %w", err)
	}
	out := map[string]float64{}
	for _, k := range keys {
		v, err := kv.Get(ctx, k)
		if errors.Is(err, bus.ErrNotFound) {
			continue // expired or removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("reading stage rate %s: %w", k, err)
		}
		var r RateRecord
		if json.Unmarshal(v, &r) != nil || r.Seconds <= 0 {
			continue
		}
		if n := r.Handled[corpus]; n > 0 {
			out[r.Stage] += float64(n) / r.Seconds
		}
	}
	return out, nil
}

// withRate sets a stage's rate and the ETA of the messages it has left.
func (s *StageStatus) withRate(rate float64) {
	s.Rate = rate
	if left := s.Pending + s.InFlight; left > 0 && rate > 0 {
		s.ETASeconds = float64(left) / rate
	}
}
