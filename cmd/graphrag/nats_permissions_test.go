package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
)

// TestNATSPermissionsExample runs nats-server in-process with the shipped example
// configuration (deploy/nats/scoped-publish.conf): the notes team publishes to its
// corpus with `graphrag publish`, and its publishes to another corpus, with the CLI
// or a plain NATS client, are refused and never reach the stream.
func TestNATSPermissionsExample(t *testing.T) {
	t.Setenv("GRAPHRAG_PIPELINE_PASSWORD", "pipeline-secret")
	t.Setenv("GRAPHRAG_NOTES_PASSWORD", "notes-secret")
	opts, err := server.ProcessConfigFile("../../deploy/nats/scoped-publish.conf")
	if err != nil {
		t.Fatalf("the example configuration does not load: %v", err)
	}
	opts.Host, opts.Port, opts.StoreDir = "127.0.0.1", -1, t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	url := func(user, pass string) string {
		return fmt.Sprintf("nats://%s:%s@%s", user, pass, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	}

	// The services provision the streams.
	admin, err := nats.Connect(url("pipeline", "pipeline-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ab, err := bus.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Provision(t.Context(), ab, pipeline.DefaultTopology()); err != nil {
		t.Fatal(err)
	}

	doc := filepath.Join(t.TempDir(), "keeper.md")
	if err := os.WriteFile(doc, []byte("# The keeper\n\nTom Arden keeps Gullhead Lighthouse."), 0o600); err != nil {
		t.Fatal(err)
	}
	publish := func(corpus string, wait time.Duration) (string, error) {
		// A refused JetStream publish gets no acknowledgement: the client gives up
		// when ctx ends, so the refused case waits less.
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		defer cancel()
		var out strings.Builder
		err := dispatch(ctx, []string{"publish", "-nats-url", url("notes_publisher", "notes-secret"), "-corpus", corpus, doc}, &out, io.Discard)
		return out.String(), err
	}
	if out, err := publish("notes", 30*time.Second); err != nil {
		t.Fatalf("publishing to the granted corpus: %v\n%s", err, out)
	}
	out, err := publish("secret", 3*time.Second)
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("publishing to another corpus: %v, want a failure", err)
	}
	t.Logf("publish to another corpus: %v\n%s", err, out)

	// A plain NATS client gets the server's permissions violation.
	nc, err := nats.Connect(url("notes_publisher", "notes-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	violation := make(chan error, 1)
	nc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case violation <- err:
		default:
		}
	})
	if err := nc.Publish(events.Subject(events.KindDocuments, "secret"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-violation:
		if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Errorf("server error %v, want a permissions violation", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the server did not report a permissions violation")
	}
	// Nor may it reach the platform's other subjects.
	if _, err := nc.Request(events.Subject(events.KindChunks, "notes"), []byte(`{}`), 2*time.Second); err == nil {
		t.Error("a publish to the chunk subject was answered")
	}

	counts, err := ab.SubjectCounts(t.Context(), pipeline.StreamName(events.KindDocuments), events.AllSubjects(events.KindDocuments))
	if err != nil {
		t.Fatal(err)
	}
	if counts[events.Subject(events.KindDocuments, "notes")] != 1 || counts[events.Subject(events.KindDocuments, "secret")] != 0 {
		t.Errorf("the document stream holds %v: want one document of notes and none of secret", counts)
	}
}
