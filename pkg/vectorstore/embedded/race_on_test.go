//go:build race

package embedded

// raceEnabled: the race detector slows the graph build ~6x; heavy tests shrink.
const raceEnabled = true
