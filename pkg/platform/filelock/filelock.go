package filelock

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Holder is a process holding a lock on a file.
type Holder struct {
	PID int
	// Command is the holder's command line ("" when it cannot be read).
	Command string
}

// String describes the holder: "pid 4242 (graphrag up -demo)".
func (h Holder) String() string {
	if h.Command == "" {
		return "pid " + strconv.Itoa(h.PID)
	}
	return fmt.Sprintf("pid %d (%s)", h.PID, h.Command)
}

// ErrInUse is what InUse errors are (errors.Is): a store another process holds.
var ErrInUse = errors.New("locked by another process")

// InUse is the error of a store at path that h holds: who holds it and what to do.
func InUse(path string, h Holder) error {
	return fmt.Errorf("%s is %w, %s: the embedded stores admit one process at a time; "+
		"stop it first, or use it (a running graphrag up serves the API at /v1/ and MCP at /mcp)", path, ErrInUse, h)
}

// procLocks is where the kernel lists the file locks held (Linux).
var procLocks = "/proc/locks"

// HolderOf returns another process holding a lock on the file at path, and false when
// none does or it cannot be told (no such file, no /proc/locks).
func HolderOf(path string) (Holder, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return Holder{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Holder{}, false
	}
	f, err := os.Open(procLocks)
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	return holderIn(f, st.Ino, os.Getpid())
}

// holderIn scans /proc/locks lines ("1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF")
// for a lock on inode ino held by a process other than self.
func holderIn(r interface{ Read([]byte) (int, error) }, ino uint64, self int) (Holder, bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// A blocked request ("1: -> FLOCK ...") has an extra field and holds nothing.
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil || pid == self {
			continue
		}
		dev := strings.Split(f[5], ":")
		if len(dev) != 3 {
			continue
		}
		if n, err := strconv.ParseUint(dev[2], 10, 64); err != nil || n != ino {
			continue
		}
		return Holder{PID: pid, Command: command(pid)}, true
	}
	return Holder{}, false
}

// command reads a process's command line, shortened for a message.
func command(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	s := string(bytes.TrimRight(bytes.ReplaceAll(b, []byte{0}, []byte{' '}), " "))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
