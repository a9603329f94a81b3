//go:build integration

package bus_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/graphrag/graphrag/pkg/bus"
)

// TestConsumerSurvivesKilledLeader: on a 3-node cluster of nats-server processes, the
// server leading a consumer is killed with SIGKILL while it delivers. Such a server
// never tells anyone that the pull requests waiting on it are gone (a stopped server
// steps down first, which TestClusterLosesLeaders covers), and the consumer must notice
// and pull from the new leader: it handles every message published meanwhile. Before
// the consumer checked for a lost pull request (Consumer.pullLost) it stalled here,
// 88 of 105 messages handled, as the chaos suite's cluster runs did with 71 documents
// pending.
func TestConsumerSurvivesKilledLeader(t *testing.T) {
	const size = 3
	dir := t.TempDir() // the binary, the servers' stores and logs
	bin := filepath.Join(dir, "nats-server")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/nats-io/nats-server/v2")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building nats-server: %v\n%s", err, out)
	}
	routes, urls := make([]string, size), make([]string, size)
	args := make([][]string, size)
	for i := range size {
		routes[i] = "nats://127.0.0.1:" + strconv.Itoa(freePort(t))
		urls[i] = "nats://127.0.0.1:" + strconv.Itoa(freePort(t))
	}
	for i := range size {
		name := "nats-" + strconv.Itoa(i+1)
		args[i] = []string{"-a", "127.0.0.1", "-p", strings.TrimPrefix(urls[i], "nats://127.0.0.1:"), "-js",
			"-sd", filepath.Join(dir, name), "-n", name, "--cluster_name", "graphrag", "--cluster", routes[i],
			"--routes", strings.Join(routes, ",")}
	}
	procs := make([]*exec.Cmd, size)
	start := func(i int) {
		t.Helper()
		log, err := os.OpenFile(filepath.Join(dir, "nats-"+strconv.Itoa(i+1)+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, args[i]...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = cmd
	}
	kill := func(i int) {
		_ = procs[i].Process.Signal(syscall.SIGKILL)
		_ = procs[i].Wait()
	}
	for i := range size {
		start(i)
	}
	t.Cleanup(func() {
		for i := range size {
			kill(i)
		}
	})

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	// The servers listen shortly after they start.
	conn := bus.ConnConfig{URL: strings.Join(urls, ","), Name: t.Name(), MaxReconnectWait: 500 * time.Millisecond}
	nc, err := bus.Connect(ctx, conn)
	for ; err != nil; nc, err = bus.Connect(ctx, conn) {
		if ctx.Err() != nil {
			t.Fatalf("connecting: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	defer nc.Close()
	b, err := bus.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// Until the cluster has elected its meta leader, nothing can be created.
	for _, s := range []bus.StreamSpec{
		{Name: evStream, Subjects: []string{"ev.>"}, Duplicates: time.Minute, Replicas: size},
		{Name: dlqStream, Subjects: []string{"dlq.>"}, Duplicates: time.Minute, Replicas: size},
	} {
		for {
			sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
			err := b.EnsureStream(sctx, s)
			scancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("EnsureStream(%s): %v", s.Name, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	var handled atomic.Int64
	spec := fastSpec("killed")
	spec.Workers, spec.AckWait = 8, 3*time.Second
	consume(t, b, spec, func(context.Context, *bus.Message) error {
		time.Sleep(20 * time.Millisecond)
		handled.Add(1)
		return nil
	})
	n := 0
	publish := func(count int) {
		t.Helper()
		for range count {
			n++
			publishRetrying(ctx, t, b, "ev.a", strconv.Itoa(n))
		}
	}
	// handledAll waits up to 45 s: an election (4–9 s) and the consumer's check.
	handledAll := func(what string) {
		t.Helper()
		deadline := time.Now().Add(45 * time.Second)
		for handled.Load() < int64(n) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d of %d messages handled", what, handled.Load(), n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	publish(5)
	handledAll("before any kill")
	leader := -1
	for leader < 0 {
		if cons, err := b.JetStream().Consumer(ctx, evStream, "killed"); err == nil && cons.CachedInfo().Cluster != nil {
			for i := range size {
				if cons.CachedInfo().Cluster.Leader == "nats-"+strconv.Itoa(i+1) {
					leader = i
				}
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no consumer leader")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Killed while it delivers: messages in flight, pull requests partly served.
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(300 * time.Millisecond)
		t.Logf("SIGKILL to nats-%d, the consumer's leader", leader+1)
		kill(leader)
	}()
	publish(100)
	<-done
	handledAll("after the consumer's leader was killed")
}
