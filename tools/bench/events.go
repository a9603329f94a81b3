package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/natsembed"
)

// benchSampleEvents are typical events of each type: a 4 KiB document, a 600-token chunk, an
// extraction with 10 entities and 12 relationships, a community, a summary.
func benchSampleEvents() []events.Event {
	c := newSynthCorpus(100, 5)
	var doc strings.Builder
	for _, ch := range c.chunks {
		if doc.Len() > 4096 {
			break
		}
		doc.WriteString(ch.text)
		doc.WriteString("\n\n")
	}
	chunkText := doc.String()[:2400]
	x := c.extraction("bench", 0)
	for i := 1; len(x.Entities) < 10; i++ {
		y := c.extraction("bench", i)
		x.Entities = append(x.Entities, y.Entities...)
		x.Relationships = append(x.Relationships, y.Relationships...)
	}
	x.Entities = x.Entities[:10]
	x.Relationships = x.Relationships[:min(12, len(x.Relationships))]
	return []events.Event{
		&events.Document{Schema: events.SchemaDocument, Corpus: "bench", ID: "reports/2026/annual.md", Title: "Annual report",
			Source: "https://example.org/annual", ContentType: events.ContentTypeMarkdown, Text: doc.String(),
			Metadata: map[string]string{"team": "research"}},
		&events.Chunk{Schema: events.SchemaChunk, Corpus: "bench", ID: "reports/2026/annual.md:3:0123abcd", DocumentID: "reports/2026/annual.md",
			DocumentTitle: "Annual report", Position: 3, Total: 9, Section: "Findings", Text: chunkText, Tokens: 600},
		x,
		&events.Community{Schema: events.SchemaCommunity, Corpus: "bench", ID: "c1-0123456789abcdef0123", Level: 1,
			ParentID: "c2-0123456789abcdef0123", MemberCount: 42, Run: "0123456789abcdef"},
		&events.Summary{Schema: events.SchemaSummary, Corpus: "bench", CommunityID: "c1-0123456789abcdef0123", Level: 1,
			Title: "Velorin Kastrup and the harbour trust", Rating: 7.5, Method: "llm/gpt-4o-mini"},
	}
}

// benchNewEventOf returns an empty value of e's type for decoding.
func benchNewEventOf(e events.Event) events.Event {
	switch e.(type) {
	case *events.Document:
		return new(events.Document)
	case *events.Chunk:
		return new(events.Chunk)
	case *events.Extraction:
		return new(events.Extraction)
	case *events.Community:
		return new(events.Community)
	case *events.Summary:
		return new(events.Summary)
	}
	panic(fmt.Sprintf("unknown event type %T", e)) // benchSampleEvents lists every type
}

type codecResult struct {
	ns     float64
	mbps   float64
	allocs int64
}

func benchCodec(fn func() error, size int, repeat time.Duration) (codecResult, error) {
	cost, err := benchRepeat(fn, repeat)
	if err != nil {
		return codecResult{}, err
	}
	return codecResult{ns: cost.ns, mbps: float64(size) / cost.ns * 1e3, allocs: cost.allocs}, nil
}

func benchEvents(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	r.command(cfg.command("events"))
	r.line("`events.Encode` (validate + JSON) and `events.Decode` (size and UTF-8 checks, JSON, validate) of a")
	r.linef("typical event of each type, repeated for %s each; MB/s counts the encoded size (10^6 bytes). The", cfg.repeatFor())
	r.line("peer is `encoding/json` alone (Marshal / Unmarshal of the same value, no validation): the difference is")
	r.line("what the contract checks cost.")
	r.line("")
	var rows [][]string
	for _, ev := range benchSampleEvents() {
		data, err := events.Encode(ev)
		if err != nil {
			return fmt.Errorf("encoding a sample %s: %w", ev.SchemaName(), err)
		}
		enc, err := benchCodec(func() error { _, err := events.Encode(ev); return err }, len(data), cfg.repeatFor())
		if err != nil {
			return err
		}
		dec, err := benchCodec(func() error { return events.Decode(data, benchNewEventOf(ev)) }, len(data), cfg.repeatFor())
		if err != nil {
			return err
		}
		jenc, err := benchCodec(func() error { _, err := json.Marshal(ev); return err }, len(data), cfg.repeatFor())
		if err != nil {
			return err
		}
		jdec, err := benchCodec(func() error { return json.Unmarshal(data, benchNewEventOf(ev)) }, len(data), cfg.repeatFor())
		if err != nil {
			return err
		}
		rows = append(rows, []string{ev.SchemaName(), benchFmtBytes(int64(len(data))),
			fmt.Sprintf("%.0f ns, %.0f MB/s, %d allocs", enc.ns, enc.mbps, enc.allocs),
			fmt.Sprintf("%.0f ns, %.0f MB/s, %d allocs", dec.ns, dec.mbps, dec.allocs),
			fmt.Sprintf("%.0f ns / %.0f ns", jenc.ns, jdec.ns)})
	}
	r.table([]string{"event", "size", "Encode", "Decode", "peer: encoding/json Marshal / Unmarshal"}, rows)
	r.line("")
	return benchBus(ctx, cfg, r)
}

// benchBus measures publish and consume through pkg/bus against an in-process server with
// a file store (as `graphrag up` runs it), next to core NATS on the same server.
func benchBus(ctx context.Context, cfg *benchConfig, r *benchReport) error {
	n := 20_000
	if cfg.quick {
		n = 2000
	}
	r.linef("Bus throughput: %d messages of 1 KiB through `pkg/bus` to an in-process nats-server with a", n)
	r.line("JetStream file store (as `graphrag up` runs it). _publish_ waits for each stream ack (as every stage")
	r.line("publishes); _publish + consume_ runs a durable pull consumer (`bus.Consume`) at the same time and stops")
	r.line("the clock when the handler has seen the last message. The peer is core NATS (no persistence, no acks)")
	r.line("on the same server: publish + subscribe, clock stopped at the last received message.")
	r.line("")
	srv, err := natsembed.Start(natsembed.Config{DataDir: filepath.Join(cfg.workDir, "bus-nats"), Port: -1}) //nolint:contextcheck // Start takes no context
	if err != nil {
		return fmt.Errorf("starting nats: %w", err)
	}
	defer srv.Shutdown()
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: srv.ClientURL(), Name: "bench", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer nc.Close()
	b, err := bus.New(nc)
	if err != nil {
		return err
	}
	payload := make([]byte, 1024)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	var rows [][]string
	row := func(what string, d time.Duration, count int) {
		rate := float64(count) / d.Seconds()
		rows = append(rows, []string{what, fmt.Sprintf("%.0f msgs/s", rate), fmt.Sprintf("%.1f MB/s", rate*1024/1e6),
			fmt.Sprintf("%.1f µs", float64(d.Microseconds())/float64(count))})
	}

	// Publish only.
	if err := b.EnsureStream(ctx, bus.StreamSpec{Name: "BENCHPUB", Subjects: []string{"benchpub.>"}, Duplicates: time.Minute}); err != nil {
		return err
	}
	t0 := time.Now()
	for i := range n {
		if _, err := b.Publish(ctx, "benchpub.x", payload); err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
	}
	row("pkg/bus publish (acked)", time.Since(t0), n)

	for _, workers := range []int{1, 8} {
		stream := fmt.Sprintf("BENCH%d", workers)
		subj := fmt.Sprintf("bench%d", workers)
		if err := b.EnsureStream(ctx, bus.StreamSpec{Name: stream, Subjects: []string{subj + ".>"}, Duplicates: time.Minute}); err != nil {
			return err
		}
		var handled atomic.Int64
		all := make(chan struct{})
		c, err := b.Consume(ctx, bus.ConsumerSpec{Stream: stream, Durable: "bench", FilterSubject: subj + ".msgs",
			DeadLetterSubject: subj + ".dlq", Workers: workers, MaxAckPending: 1000}, func(context.Context, *bus.Message) error {
			if handled.Add(1) == int64(n) {
				close(all)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("consuming: %w", err)
		}
		t0 := time.Now()
		for i := range n {
			if _, err := b.Publish(ctx, subj+".msgs", payload); err != nil {
				return fmt.Errorf("publish %d: %w", i, err)
			}
		}
		select {
		case <-all:
		case <-time.After(5 * time.Minute):
			return fmt.Errorf("%w: %d of %d messages consumed", errBenchCheck, handled.Load(), n)
		case <-ctx.Done():
			return ctx.Err()
		}
		d := time.Since(t0)
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = c.Stop(sctx)
		cancel()
		if err != nil {
			return fmt.Errorf("stopping the consumer: %w", err)
		}
		row(fmt.Sprintf("pkg/bus publish + consume, %d worker(s)", workers), d, n)
	}

	// Core NATS peer.
	var got atomic.Int64
	all := make(chan struct{})
	sub, err := nc.Subscribe("core.bench", func(*nats.Msg) {
		if got.Add(1) == int64(n) {
			close(all)
		}
	})
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return err
	}
	if err := nc.Flush(); err != nil {
		return err
	}
	t0 = time.Now()
	for range n {
		if err := nc.Publish("core.bench", payload); err != nil {
			return err
		}
	}
	select {
	case <-all:
	case <-time.After(time.Minute):
		return fmt.Errorf("%w: core NATS delivered %d of %d", errBenchCheck, got.Load(), n)
	}
	row("peer: core NATS publish + subscribe", time.Since(t0), n)
	r.table([]string{"path", "throughput", "payload", "per message"}, rows)
	return nil
}
