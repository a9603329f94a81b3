//go:build race

package main

// raceEnabled: the race detector slows the pipeline tests four- to tenfold, and
// `make test` runs every package under it within go test's 10-minute limit.
const raceEnabled = true
