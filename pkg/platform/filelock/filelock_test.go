package filelock

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHolderIn(t *testing.T) {
	locks := "1: FLOCK  ADVISORY  WRITE 4242 08:01:777 0 EOF\n" +
		"1: -> FLOCK  ADVISORY  WRITE 4343 08:01:777 0 EOF\n" +
		"2: POSIX  ADVISORY  READ 99 08:01:555 0 EOF\n"
	if h, ok := holderIn(strings.NewReader(locks), 777, 1); !ok || h.PID != 4242 {
		t.Errorf("holder of inode 777 = %+v, %v; want pid 4242", h, ok)
	}
	if _, ok := holderIn(strings.NewReader(locks), 777, 4242); ok {
		t.Error("the process itself is not another holder")
	}
	if _, ok := holderIn(strings.NewReader(locks), 888, 1); ok {
		t.Error("a holder found for an unlocked inode")
	}
}

// A lock another process holds is found with its command line.
func TestHolderOfAnotherProcess(t *testing.T) {
	if _, err := os.Stat(procLocks); err != nil {
		t.Skip("no /proc/locks on this system")
	}
	path := filepath.Join(t.TempDir(), "store.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := HolderOf(path); ok {
		t.Fatal("a holder found before anyone locked the file")
	}
	// flock(1) holds the lock while it runs sleep: another process, as a running
	// `graphrag up` would be.
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("flock(1) is not installed")
	}
	cmd := exec.CommandContext(t.Context(), flock, "-x", path, "sleep", "60")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = stdout.Close() })
	for range 1000 { // until flock has taken the lock (a safety bound, not a speed goal)
		if h, ok := HolderOf(path); ok {
			if h.PID != cmd.Process.Pid || !strings.Contains(h.Command, "flock") {
				t.Errorf("holder %v, want pid %d running flock", h, cmd.Process.Pid)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("the lock was never seen")
}
