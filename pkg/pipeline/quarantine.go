package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// MetricQuarantined counts the records the stages quarantined, by stage: records a
// store refused as invalid, left out of their batch so that the stage goes on.
const MetricQuarantined = "graphrag.pipeline.records.quarantined"

// Quarantined is a record a stage left out because a store refused it as invalid
// (vectorstore.ErrInvalidArgument: a zero vector, a text the backend cannot hold): like
// a dead letter, with its reason, except that what it belongs to (a detection run, a
// document) goes on without it, and the corpus completes. It lives in StateBucket under
// schema.QuarantineKey until the stage writes the record after all, or the corpus is
// dropped.
type Quarantined struct {
	Stage      string    `json:"stage"`
	Collection string    `json:"collection"`
	ID         string    `json:"id"` // shortened to MaxQuarantinedField bytes
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

// MaxQuarantinedField bounds the id and the reason kept of a quarantined record (an
// entity name can be a megabyte; a KV value cannot).
const MaxQuarantinedField = 512

// Quarantine records the records of one stage and collection that a store refused.
func Quarantine(ctx context.Context, kv bus.KV, corpus, stage, collection string, refused []vectorstore.Refused) error {
	now := time.Now().UTC()
	for _, r := range refused {
		q := Quarantined{Stage: stage, Collection: collection, ID: shorten(r.ID), Reason: shorten(r.Err.Error()), At: now}
		b, err := json.Marshal(q)
		if err != nil {
			return fmt.Errorf("encoding a quarantined record: %w", err)
		}
		if err := kv.Put(ctx, schema.QuarantineKey(corpus, stage, collection, r.ID), b); err != nil {
			return fmt.Errorf("quarantining record %q of %s: %w", q.ID, collection, err)
		}
	}
	if len(refused) > 0 {
		quarantineCounter().Add(ctx, int64(len(refused)), metric.WithAttributes(attribute.String("stage", stage)))
	}
	return nil
}

// ReplaceQuarantine makes refused the records a stage has quarantined in a corpus:
// the entries of earlier writes that are not refused again are removed. For a stage
// that tries every record it holds quarantined again on each run (the grapher's
// entities), so that a record written after all, or gone, leaves the list.
func ReplaceQuarantine(ctx context.Context, kv bus.KV, corpus, stage, collection string, refused []vectorstore.Refused) error {
	keys, err := kv.Keys(ctx, schema.QuarantineStagePrefix(corpus, stage))
	if err != nil {
		return fmt.Errorf("listing quarantined records: %w", err)
	}
	keep := make(map[string]bool, len(refused))
	for _, r := range refused {
		keep[schema.QuarantineKey(corpus, stage, collection, r.ID)] = true
	}
	for _, k := range keys {
		if keep[k] {
			continue
		}
		if err := kv.Delete(ctx, k); err != nil {
			return fmt.Errorf("releasing a quarantined record: %w", err)
		}
	}
	return Quarantine(ctx, kv, corpus, stage, collection, refused)
}

// ReleaseQuarantined takes the records ids of one stage and collection off the
// quarantine list (they are written after all, or gone). It writes only for records
// listed: a few ids are looked up one by one, more against the list of the stage's
// entries (one read for all).
func ReleaseQuarantined(ctx context.Context, kv bus.KV, corpus, stage, collection string, ids []string) error {
	var listed func(key string) (bool, error)
	if len(ids) > releaseLookups {
		keys, err := kv.Keys(ctx, schema.QuarantineStagePrefix(corpus, stage))
		if err != nil {
			return fmt.Errorf("listing quarantined records: %w", err)
		}
		set := make(map[string]bool, len(keys))
		for _, k := range keys {
			set[k] = true
		}
		listed = func(k string) (bool, error) { return set[k], nil }
	} else {
		listed = func(k string) (bool, error) {
			_, err := kv.Get(ctx, k)
			if errors.Is(err, bus.ErrNotFound) {
				return false, nil
			}
			return err == nil, err
		}
	}
	for _, id := range ids {
		k := schema.QuarantineKey(corpus, stage, collection, id)
		ok, err := listed(k)
		if err != nil {
			return fmt.Errorf("reading a quarantined record: %w", err)
		}
		if !ok {
			continue
		}
		if err := kv.Delete(ctx, k); err != nil {
			return fmt.Errorf("releasing a quarantined record: %w", err)
		}
	}
	return nil
}

// releaseLookups is how many ids ReleaseQuarantined looks up one by one at most.
const releaseLookups = 4

// QuarantinedRecords reads up to limit records quarantined in a corpus, newest first,
// and how many there are in all.
func QuarantinedRecords(ctx context.Context, kv bus.KV, corpus string, limit int) ([]Quarantined, int, error) {
	keys, err := kv.Keys(ctx, schema.QuarantinePrefix(corpus))
	if err != nil {
		return nil, 0, fmt.Errorf("listing quarantined records: %w", err)
	}
	var out []Quarantined
	for _, k := range keys[:min(len(keys), limit)] {
		v, err := kv.Get(ctx, k)
		if errors.Is(err, bus.ErrNotFound) {
			continue // released meanwhile
		}
		if err != nil {
			return nil, 0, fmt.Errorf("reading a quarantined record: %w", err)
		}
		var q Quarantined
		if err := json.Unmarshal(v, &q); err != nil {
			return nil, 0, fmt.Errorf("decoding a quarantined record: %w", err)
		}
		out = append(out, q)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out, len(keys), nil
}

// DropQuarantine forgets every record quarantined in a corpus (the corpus is dropped).
func DropQuarantine(ctx context.Context, kv bus.KV, corpus string) error {
	keys, err := kv.Keys(ctx, schema.QuarantinePrefix(corpus))
	if err != nil {
		return fmt.Errorf("listing quarantined records: %w", err)
	}
	for _, k := range keys {
		if err := kv.Delete(ctx, k); err != nil {
			return fmt.Errorf("releasing a quarantined record: %w", err)
		}
	}
	return nil
}

// shorten cuts s to MaxQuarantinedField bytes on a rune boundary.
func shorten(s string) string {
	if len(s) <= MaxQuarantinedField {
		return s
	}
	return strings.ToValidUTF8(s[:MaxQuarantinedField], "") + "…"
}

var quarantineCounter = sync.OnceValue(func() metric.Int64Counter {
	c, err := otel.Meter("github.com/graphrag/graphrag/pkg/pipeline").Int64Counter(MetricQuarantined,
		metric.WithUnit("{record}"), metric.WithDescription("Records a store refused as invalid, left out so that the stage goes on, by stage."))
	if err != nil {
		otel.Handle(err)
	}
	return c
})

// StartQuarantineMetric records the stage's count of quarantined records at zero, so that
// the metric is exported (and a rate or an alert sees the first record) before any is.
func StartQuarantineMetric(stage string) {
	quarantineCounter().Add(context.Background(), 0, metric.WithAttributes(attribute.String("stage", stage)))
}
