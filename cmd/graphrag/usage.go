package main

import (
	"flag"
	"fmt"
	"io"
)

// setUsage gives fs a usage of its synopsis and the command's own flags: those
// registered after the call. The flags registered before it (the data dir, the stores and
// NATS, shared with graphrag up) are named in one line instead of listed, since
// `graphrag up -h` describes them; a list of fifty of them buried the command's own.
func setUsage(fs *flag.FlagSet, w io.Writer, synopsis string) {
	shared := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { shared[f.Name] = true })
	fs.Usage = func() {
		fmt.Fprintln(w, synopsis)
		own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		own.SetOutput(w)
		fs.VisitAll(func(f *flag.Flag) {
			if !shared[f.Name] {
				own.Var(f.Value, f.Name, f.Usage)
			}
		})
		own.PrintDefaults()
		if len(shared) > 0 {
			fmt.Fprintf(w, "  and %d flags shared with graphrag up that choose the data dir, the stores and NATS (-data-dir, -nats-url, -graph-store, ...): graphrag up -h lists them\n", len(shared))
		}
	}
}
