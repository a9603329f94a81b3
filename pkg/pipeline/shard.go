package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
)

// MaxShards bounds the shards of a stream: each is a lease and a durable consumer.
const MaxShards = 1024

// A sharded stream stores each message of graphrag.<kind>.<corpus> as
// graphrag.<kind>.<shard>.<corpus>, shard = ShardOf(corpus, n), through a subject
// transform the server applies as it stores the message (nats-server's
// {{partition(n,1)}}): publishers keep the one subject per corpus, and a replica that
// owns a shard reads it through its own durable consumer filtered on
// graphrag.<kind>.<shard>.*, so that every corpus is read by one replica at a time.
// The number of shards is fixed once a stream has it (EnsureShards refuses another):
// a message's shard is written into its stored subject.

// ShardOf is the shard of a corpus among n, as the server computes it: FNV-1a (32 bits)
// of the corpus name, modulo n.
func ShardOf(corpus string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(corpus))
	return int(h.Sum32() % uint32(n)) //nolint:gosec // n is at most MaxShards
}

// ShardDurable names the durable consumer of one shard of a stage's input.
func ShardDurable(stage string, shard int) string { return stage + "-shard-" + strconv.Itoa(shard) }

// ShardSubjects is the filter of one shard of kind k's stream.
func ShardSubjects(k events.Kind, shard int) string {
	return events.SubjectPrefix + "." + string(k) + "." + strconv.Itoa(shard) + ".*"
}

func shardTransform(k events.Kind, n int) bus.Transform {
	return bus.Transform{
		Source:      events.AllSubjects(k),
		Destination: fmt.Sprintf("%s.%s.{{partition(%d,1)}}.{{wildcard(1)}}", events.SubjectPrefix, k, n),
	}
}

// Shards reads how many shards kind k's stream has (0: not sharded).
func Shards(ctx context.Context, b *bus.Bus, k events.Kind) (int, error) {
	t, err := b.StreamTransform(ctx, StreamName(k))
	if errors.Is(err, bus.ErrNotFound) {
		return 0, nil // not provisioned yet: nothing is sharded
	}
	if err != nil || t == nil {
		return 0, err
	}
	for n := range 1 + MaxShards {
		if n > 0 && *t == shardTransform(k, n) {
			return n, nil
		}
	}
	return 0, fmt.Errorf("stream %s has a subject transform that is no sharding (%s → %s)", StreamName(k), t.Source, t.Destination)
}

// EnsureShards makes kind k's stream (which must exist: Provision) sharded in n, or
// checks that it is. It refuses another number of shards than the stream has: stored
// messages keep the shard they were stored with, so a new number would give one
// corpus two shards, read by two replicas at once.
func EnsureShards(ctx context.Context, b *bus.Bus, k events.Kind, n int) error {
	if n < 1 || n > MaxShards {
		return fmt.Errorf("%w: %d shards: want 1 to %d", bus.ErrInvalidSpec, n, MaxShards)
	}
	have, err := Shards(ctx, b, k)
	switch {
	case err != nil:
		return err
	case have == n:
		return nil
	case have != 0:
		return fmt.Errorf("%w: stream %s has %d shards, not %d: the number of shards is fixed when a bus is first provisioned with them",
			bus.ErrInvalidSpec, StreamName(k), have, n)
	}
	t := shardTransform(k, n)
	return b.SetStreamTransform(ctx, StreamName(k), &t)
}

// corpusSubjects counts a corpus's messages of kind k by the subject they are stored
// under: the one they were published on, and on a sharded stream the shard's (a stream
// sharded after it stored messages holds both).
func corpusSubjects(ctx context.Context, b *bus.Bus, k events.Kind, corpus string) (map[string]uint64, error) {
	stream := StreamName(k)
	counts, err := subjectCounts(ctx, b, stream, events.Subject(k, corpus))
	if err != nil {
		return nil, err
	}
	sharded, err := subjectCounts(ctx, b, stream, events.SubjectPrefix+"."+string(k)+".*."+corpus)
	if err != nil {
		return nil, err
	}
	maps.Copy(counts, sharded)
	return counts, nil
}

// subjectDurable names the durable consumer of a stage that reads a stored subject:
// the shard's for graphrag.<kind>.<shard>.<corpus>, else the stage's one.
func subjectDurable(stage, subject string) string {
	parts := strings.Split(subject, ".")
	if len(parts) == 4 {
		if n, err := strconv.Atoi(parts[2]); err == nil {
			return ShardDurable(stage, n)
		}
	}
	return Durable(stage)
}
