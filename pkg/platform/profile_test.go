package platform

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The profile file is written and holds a gzip-compressed pprof protobuf; a second
// profile while one runs is refused with an error, not a silent empty file.
func TestStartCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := StartCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartCPUProfile(filepath.Join(t.TempDir(), "again.pprof")); err == nil {
		t.Error("a second concurrent CPU profile started")
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("profile is not gzip-compressed pprof data: % x", b[:min(len(b), 8)])
	}
	if _, err := StartCPUProfile(filepath.Join(t.TempDir(), "missing", "cpu.pprof")); err == nil {
		t.Error("a profile into a missing directory started")
	}
}

// The heap profile is gzip-compressed pprof data; an unwritable path is an error.
func TestWriteHeapProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	if err := WriteHeapProfile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("heap profile is not gzip-compressed pprof data: % x", b[:min(len(b), 8)])
	}
	if err := WriteHeapProfile(filepath.Join(t.TempDir(), "missing", "heap.pprof")); err == nil {
		t.Error("a heap profile into a missing directory was reported written")
	}
}

// Each SIGUSR1 writes the next numbered heap profile.
func TestHeapProfileOnSignal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap")
	ctx, cancel := context.WithCancel(t.Context())
	HeapProfileOnSignal(ctx, path, slog.New(slog.DiscardHandler))
	for n := 1; n <= 2; n++ {
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s.%d", path, n)
		for i := 0; ; i++ { // the handler writes asynchronously: wait for the file
			if b, err := os.ReadFile(want); err == nil && bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
				break
			}
			if i == 500 {
				t.Fatalf("%s not written after SIGUSR1", want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	cancel()
}
