package bench

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// procMemory is the resident memory of a process by kind, in bytes.
type procMemory struct {
	rss, anon, file int64
}

// readProcMemory reads VmRSS, RssAnon and RssFile from /proc/PID/status (Linux).
func readProcMemory(pid int) (procMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, err
	}
	defer f.Close()
	var m procMemory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch k {
		case "VmRSS":
			dst = &m.rss
		case "RssAnon":
			dst = &m.anon
		case "RssFile":
			dst = &m.file
		default:
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err == nil {
			*dst = kb << 10
		}
	}
	return m, sc.Err()
}

// samplePeakMemory samples the memory of pid every 250 ms until stop is closed and
// returns the largest value of each kind (each its own maximum: they peak at
// different times).
func samplePeakMemory(pid int, stop <-chan struct{}) procMemory {
	var peak procMemory
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if m, err := readProcMemory(pid); err == nil {
			peak.rss, peak.anon, peak.file = max(peak.rss, m.rss), max(peak.anon, m.anon), max(peak.file, m.file)
		}
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}
