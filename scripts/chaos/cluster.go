package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/schema"
)

// A cluster layout chooses its victims itself and checks its replicas at the end.
type clustered interface {
	// pick returns the next server to kill and why it was chosen, or nil to choose at
	// random among the victims.
	pick(ctx context.Context, b *bus.Bus, rng *rand.Rand) (*proc, string)
	// checkReplicas fails unless everything the pipeline provisioned is replicated on
	// every server of the cluster, and every replica is current.
	checkReplicas(ctx context.Context, b *bus.Bus) error
}

var _ clustered = (*upLayout)(nil)

// pick chooses, on a cluster, first the leader of one of the pipeline's event streams
// (at random), then any server but the one killed last, once that one is healthy again:
// the cluster loses one node at a time, which a replication factor of 3 survives.
func (l *upLayout) pick(ctx context.Context, b *bus.Bus, rng *rand.Rand) (*proc, string) {
	if len(l.nats) < 2 {
		return nil, ""
	}
	if len(l.killed) == 0 {
		stream := pipeline.StreamName(events.Kinds[rng.IntN(len(events.Kinds))])
		if p := l.streamLeader(ctx, b, stream); p != nil {
			l.killed = append(l.killed, p)
			return p, "leader of " + stream
		}
		l.h.log.Warn("no leader found; killing a server at random", "stream", stream)
		p := l.nats[rng.IntN(len(l.nats))]
		l.killed = append(l.killed, p)
		return p, ""
	}
	last := l.killed[len(l.killed)-1]
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	err := last.waitReady(wctx)
	cancel()
	if err != nil {
		l.h.log.Warn("the server killed last is not healthy again; killing another all the same", "server", last.name, "err", err)
	}
	others := slices.DeleteFunc(slices.Clone(l.nats), func(p *proc) bool { return p == last })
	p := others[rng.IntN(len(others))]
	l.killed = append(l.killed, p)
	return p, ""
}

// streamLeader is the server leading stream, asked for up to 15 s (nil: none found).
func (l *upLayout) streamLeader(ctx context.Context, b *bus.Bus, stream string) *proc {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
		leader := ""
		if s, err := b.JetStream().Stream(ictx, stream); err == nil {
			if info, err := s.Info(ictx); err == nil && info.Cluster != nil {
				leader = info.Cluster.Leader
			}
		}
		cancel()
		for _, p := range l.nats {
			if p.name == leader {
				return p
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

// checkReplicas waits up to a minute for every stream of the pipeline (the streams
// behind its key-value buckets and object store included) to have one current replica on
// every server; on anything but a cluster it checks nothing.
func (l *upLayout) checkReplicas(ctx context.Context, b *bus.Bus) error {
	if len(l.nats) < 2 {
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		problems, err := l.replicaProblems(ctx, b)
		if err == nil && len(problems) == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return fmt.Errorf("checking replicas: %w", err)
			}
			return fmt.Errorf("replicas: %s", strings.Join(problems, "; "))
		}
		time.Sleep(time.Second)
	}
}

// pipelineStreams are the streams the pipeline provisions: its event streams and dead
// letters, and the streams behind its key-value buckets and object store.
var pipelineStreams = func() []string {
	names := []string{pipeline.DLQStream, "KV_" + schema.StateBucket, "KV_" + schema.LLMCacheBucket,
		"KV_" + schema.LeaseBucket, "OBJ_" + schema.DocumentBucket}
	for _, k := range events.Kinds {
		names = append(names, pipeline.StreamName(k))
	}
	return names
}()

func (l *upLayout) replicaProblems(ctx context.Context, b *bus.Bus) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var problems []string
	seen := map[string]bool{}
	list := b.JetStream().ListStreams(ctx)
	for info := range list.Info() {
		name := info.Config.Name
		if !slices.Contains(pipelineStreams, name) {
			continue
		}
		seen[name] = true
		if info.Config.Replicas != len(l.nats) {
			problems = append(problems, fmt.Sprintf("%s has %d replicas", name, info.Config.Replicas))
			continue
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			problems = append(problems, name+" has no leader")
			continue
		}
		current := 1 // the leader
		for _, r := range info.Cluster.Replicas {
			if r.Current && !r.Offline {
				current++
			}
		}
		if current != len(l.nats) {
			problems = append(problems, fmt.Sprintf("%s has %d current replicas of %d", name, current, len(l.nats)))
		}
	}
	if err := list.Err(); err != nil {
		return nil, err
	}
	for _, name := range pipelineStreams {
		if !seen[name] {
			problems = append(problems, name+" is missing")
		}
	}
	return problems, nil
}
