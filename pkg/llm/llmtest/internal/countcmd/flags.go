package countcmd

import (
	"flag"
	"time"
)

// Flags shape the fake endpoint as a real one: its embedding dimension, latency and
// capacity.
type Flags struct {
	dim, concurrency int
	latency          time.Duration
}

// Parse parses a counting command's arguments: -dim, -latency and -concurrency, and the
// flags own adds (nil for none).
func Parse(name string, args []string, own func(*flag.FlagSet)) (*Flags, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f := &Flags{}
	fs.IntVar(&f.dim, "dim", 64, "dimension of the fake embeddings")
	fs.DurationVar(&f.latency, "latency", 0, "delay of every answer, as a slow endpoint's")
	fs.IntVar(&f.concurrency, "concurrency", 0, "requests served at once (0: any number)")
	if own != nil {
		own(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return f, nil
}
