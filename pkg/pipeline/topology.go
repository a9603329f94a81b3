package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/schema"
)

// Stage names. The chunker and the extractor both run in the extractor service.
const (
	StageChunker    = "chunker"
	StageExtractor  = "extractor"
	StageGrapher    = "grapher"
	StageSummarizer = "summarizer"
)

// Stages lists the stages in flow order with the kind of event each consumes.
var Stages = []struct {
	Name  string
	Input events.Kind
}{
	{StageChunker, events.KindDocuments},
	{StageExtractor, events.KindChunks},
	{StageGrapher, events.KindExtractions},
	{StageSummarizer, events.KindCommunities},
}

// LeaseTTL is how long a lease in schema.LeaseBucket outlives its holder's last
// renewal: a grapher that dies without releasing it is replaced after at most this
// long. A holder keeps its lease through an outage of the bucket of up to two fifths
// of it (pkg/bus Lease), 12 s: longer than a JetStream cluster takes to elect a new
// leader for the bucket after losing the server that led it (Raft election timeout
// 4–9 s in nats-server; docs/adr/0055-a-cluster-that-loses-a-node.md).
const LeaseTTL = 30 * time.Second

// DLQStream holds dead letters of every stage, on graphrag.dlq.<stage>.<corpus>.
const DLQStream = "GRAPHRAG_DLQ"

// StreamName is the stream that holds events of kind k.
func StreamName(k events.Kind) string { return "GRAPHRAG_" + strings.ToUpper(string(k)) }

// Topology configures the streams.
type Topology struct {
	// MaxAge bounds how long events are kept (replay window); 0 keeps them until MaxBytes.
	MaxAge time.Duration
	// MaxBytes bounds each stream; 0 = unlimited.
	MaxBytes int64
	// Replicas is the stream replication factor in a cluster (1 for a single server).
	Replicas int
	// Duplicates is the de-duplication window for Nats-Msg-Id.
	Duplicates time.Duration
}

// DefaultTopology keeps events for 30 days with a 10-minute de-duplication window.
func DefaultTopology() Topology {
	return Topology{MaxAge: 30 * 24 * time.Hour, Replicas: 1, Duplicates: 10 * time.Minute}
}

// Provision creates or updates every stream and bucket the pipeline uses. It is
// idempotent: every service calls it at start.
func Provision(ctx context.Context, b *bus.Bus, t Topology) error {
	for _, k := range events.Kinds {
		spec := bus.StreamSpec{
			Name:       StreamName(k),
			Subjects:   []string{events.AllSubjects(k)},
			MaxAge:     t.MaxAge,
			MaxBytes:   t.MaxBytes,
			Replicas:   t.Replicas,
			Duplicates: t.Duplicates,
		}
		if err := b.EnsureStream(ctx, spec); err != nil {
			return fmt.Errorf("provisioning stream %s: %w", spec.Name, err)
		}
	}
	dlq := bus.StreamSpec{Name: DLQStream, Subjects: []string{events.SubjectPrefix + ".dlq.>"},
		MaxAge: t.MaxAge, MaxBytes: t.MaxBytes, Replicas: t.Replicas, Duplicates: t.Duplicates}
	if err := b.EnsureStream(ctx, dlq); err != nil {
		return fmt.Errorf("provisioning stream %s: %w", dlq.Name, err)
	}
	for _, bucket := range []string{schema.StateBucket, schema.LLMCacheBucket} {
		if _, err := b.EnsureKV(ctx, bucket, 0, bus.WithReplicas(t.Replicas)); err != nil {
			return fmt.Errorf("provisioning bucket %s: %w", bucket, err)
		}
	}
	if _, err := b.EnsureKV(ctx, schema.LeaseBucket, LeaseTTL, bus.WithReplicas(t.Replicas)); err != nil {
		return fmt.Errorf("provisioning bucket %s: %w", schema.LeaseBucket, err)
	}
	if err := b.EnsureObjectStore(ctx, schema.DocumentBucket, bus.WithReplicas(t.Replicas)); err != nil {
		return fmt.Errorf("provisioning object store %s: %w", schema.DocumentBucket, err)
	}
	return nil
}

// Durable is the name of a stage's durable consumer, shared by every replica of the
// stage and every corpus.
func Durable(stage string) string { return stage }
