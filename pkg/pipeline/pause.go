package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/schema"
)

// StatePaused: work waits because something a stage depends on is down (its model
// endpoint, a store); it resumes by itself when that answers again (Status.Paused says
// which stage, what is down, since when and why).
const StatePaused = "paused: dependency unavailable"

// Pause is a replica of a stage that cannot work now, as it records itself in
// schema.LeaseBucket under paused.<stage>.<replica>.
type Pause struct {
	Stage  string    `json:"stage"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
}

// OutageSource says whether what a stage depends on is down: an *llm.Client, the
// stores of a stage (Dependencies).
type OutageSource interface {
	Outage() (down bool, since time.Time, reason string)
}

// AnyOutage reports the first of its sources that is down: a service's chat client and
// its embedder, say.
type AnyOutage []OutageSource

// Outage implements OutageSource.
func (a AnyOutage) Outage() (bool, time.Time, string) {
	for _, src := range a {
		if down, since, reason := src.Outage(); down {
			return true, since, reason
		}
	}
	return false, time.Time{}, ""
}

const (
	pausePrefix = "paused."
	// pausePoll is how often a replica looks at its source; pauseRenew how often it
	// rewrites its record while paused (entries of the bucket expire LeaseTTL after
	// their last write, so a replica that dies while paused leaves no record for long).
	pausePoll  = time.Second
	pauseRenew = LeaseTTL / 3
)

var keyUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// ReportPauses records that this replica of stage is paused while src reports an
// outage, and removes the record when src reports none again; GetStatus reads the
// records. It runs until the returned stop is called (which removes the record).
func ReportPauses(ctx context.Context, b *bus.Bus, stage string, src OutageSource, log *slog.Logger) (stop func()) {
	host, _ := os.Hostname()
	replica := keyUnsafe.ReplaceAllString(host, "_") + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64()%1e6, 10)
	key := pausePrefix + stage + "." + replica
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		reportPauses(ctx, b, key, stage, src, log)
	}()
	return func() {
		cancel()
		<-done
	}
}

func reportPauses(ctx context.Context, b *bus.Bus, key, stage string, src OutageSource, log *slog.Logger) {
	t := time.NewTicker(pausePoll)
	defer t.Stop()
	var kv bus.KV
	var written time.Time // zero: no record of ours
	for {
		down, since, reason := src.Outage()
		var err error
		if kv == nil {
			kv, err = b.KV(ctx, schema.LeaseBucket)
		}
		switch {
		case err != nil:
		case down && time.Since(written) >= pauseRenew:
			v, _ := json.Marshal(Pause{Stage: stage, Reason: reason, Since: since})
			if err = kv.Put(ctx, key, v); err == nil {
				written = time.Now()
			}
		case !down && !written.IsZero():
			if err = kv.Delete(ctx, key); err == nil {
				written = time.Time{}
			}
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("recording the stage's pause", "stage", stage, "err", err)
		}
		select {
		case <-ctx.Done():
			if !written.IsZero() && kv != nil {
				dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				_ = kv.Delete(dctx, key)
				cancel()
			}
			return
		case <-t.C:
		}
	}
}

// Pauses lists the stage replicas that record themselves paused now.
func Pauses(ctx context.Context, b *bus.Bus) ([]Pause, error) {
	kv, err := b.KV(ctx, schema.LeaseBucket)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pauses: %w", err)
	}
	keys, err := kv.Keys(ctx, pausePrefix)
	if err != nil {
		return nil, fmt.Errorf("reading pauses: %w", err)
	}
	var out []Pause
	for _, k := range keys {
		v, err := kv.Get(ctx, k)
		if errors.Is(err, bus.ErrNotFound) {
			continue // expired or removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("reading pause %s: %w", k, err)
		}
		var p Pause
		if json.Unmarshal(v, &p) == nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stage < out[j].Stage })
	return out, nil
}
