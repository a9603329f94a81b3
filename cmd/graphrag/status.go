package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/graphrag/graphrag/pkg/catalog"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
)

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var nf natsFlags
	nf.register(fs)
	corpus := fs.String("corpus", "", "corpus name (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	wait := fs.Duration("wait", 0, "wait up to this long for indexing to complete (exit status 1 if it does not)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: graphrag status -corpus NAME [-wait DURATION] [-json] [flags]")
		fmt.Fprintln(stderr, "Prints a corpus's indexing progress per stage (with its rate over the last minute and the ETA of what it")
		fmt.Fprintln(stderr, "has left), its communities and quarantined records. Exit status 1:")
		fmt.Fprintln(stderr, "no document was ever published to the corpus, it failed (dead letters), or -wait ran out.")
		fs.PrintDefaults()
	}
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if err := events.ValidateCorpus(*corpus); err != nil {
		return fmt.Errorf("-corpus: %w", err)
	}
	b, closeFn, err := nf.connect(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	var st pipeline.Status
	// A corpus nothing was ever published to is not "in progress": say so, and fail,
	// also under -wait, which would otherwise wait for indexing that never starts.
	if st, err = pipeline.GetStatus(ctx, b, *corpus); err == nil && unknownCorpus(st) {
		return fmt.Errorf("corpus %s: no document was ever published to it (check the name; a corpus appears with its first document)", *corpus)
	}
	if *wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, *wait)
		defer cancel()
		st, err = pipeline.WaitComplete(wctx, b, *corpus, 500*time.Millisecond, nil)
	} else {
		st, err = pipeline.GetStatus(ctx, b, *corpus)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(st)
	} else {
		printStatus(stdout, st)
	}
	if err != nil {
		return err
	}
	return failedError(st)
}

// failedError is the error of a corpus whose pipeline is drained but lost messages to
// the dead-letter queue or reports: it is not complete, as GET /v1/corpora says.
func failedError(st pipeline.Status) error {
	if catalog.State(st) != catalog.StateFailed {
		return nil
	}
	return fmt.Errorf("corpus %s: indexing failed: %s (the reasons: graphrag status -json, GET /v1/corpora/%s/status)", st.Corpus, failedWhat(st), st.Corpus)
}

// failedWhat says what a failed corpus lost.
func failedWhat(st pipeline.Status) string {
	var dead uint64
	for _, s := range st.Stages {
		dead += s.DeadLettered
	}
	if dead > 0 {
		if dead == 1 {
			return "1 message was dead-lettered, so what it carried is not indexed"
		}
		return fmt.Sprintf("%d messages were dead-lettered, so what they carried is not indexed", dead)
	}
	return fmt.Sprintf("%d communities have no report", st.Graph.Unreported)
}

// counted writes n and the noun, with an "s" unless n is 1: "1 detection run", "3 levels".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// formatRate prints a stage's rate (messages per second over the last minute).
func formatRate(r float64) string {
	switch {
	case r == 0:
		return "-"
	case r < 10:
		return strconv.FormatFloat(r, 'f', 2, 64)
	default:
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
}

// formatETA prints how long the messages a stage has left take at its rate: "-" when
// none are left, "?" when it handled none in the last minute.
func formatETA(s pipeline.StageStatus) string {
	switch {
	case s.Pending+s.InFlight == 0:
		return "-"
	case s.ETASeconds <= 0:
		return "?"
	default:
		return time.Duration(math.Ceil(s.ETASeconds) * float64(time.Second)).String()
	}
}

// unknownCorpus reports whether no document of the corpus is in the stream: a name with a
// typo, or a corpus not published yet.
func unknownCorpus(st pipeline.Status) bool {
	return len(st.Stages) > 0 && st.Stages[0].Total == 0 && st.Graph.Detections == 0
}

func printStatus(w io.Writer, st pipeline.Status) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\ttotal\tpending\tin flight\tdone\tdead-lettered\trate/s\tETA\t")
	for _, s := range st.Stages {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", s.Stage, s.Total, s.Pending, s.InFlight, s.Done, s.DeadLettered,
			formatRate(s.Rate), formatETA(s))
	}
	_ = tw.Flush()
	g := st.Graph
	state := "communities current"
	if g.Dirty {
		state = fmt.Sprintf("community detection pending (%d merges since the last run)", g.Changes)
	}
	fmt.Fprintf(w, "graph: %s; %s, %s, last run %s\n", state, counted(g.Detections, "detection run"), counted(g.Levels, "level"), g.LastRun)
	fmt.Fprintf(w, "communities: %d, without a report: %d\n", g.Communities, g.Unreported)
	if f := g.Failing(); f != "" {
		fmt.Fprintf(w, "graph: %s; next try %s\n", f, g.NextRetry.UTC().Format(time.RFC3339))
	}
	if st.Quarantined > 0 {
		fmt.Fprintf(w, "quarantined records (refused by a store, left out; the corpus goes on without them): %d\n", st.Quarantined)
		for _, q := range st.QuarantinedRecords {
			fmt.Fprintf(w, "  %s %s %q: %s\n", q.Stage, q.Collection, q.ID, q.Reason)
		}
		if n := st.Quarantined - len(st.QuarantinedRecords); n > 0 {
			fmt.Fprintf(w, "  and %d more\n", n)
		}
	}
	for _, p := range st.Paused {
		fmt.Fprintf(w, "paused: %s waits since %s: %s\n", p.Stage, p.Since.UTC().Format(time.RFC3339), p.Reason)
	}
	switch state := catalog.State(st); {
	case state == catalog.StateFailed:
		fmt.Fprintf(w, "corpus %s: failed: %s\n", st.Corpus, failedWhat(st))
	case st.Complete:
		fmt.Fprintf(w, "corpus %s: indexing complete\n", st.Corpus)
	case st.State == "" || st.State == pipeline.StateIndexing:
		fmt.Fprintf(w, "corpus %s: indexing in progress\n", st.Corpus)
	default:
		fmt.Fprintf(w, "corpus %s: %s\n", st.Corpus, st.State)
	}
}
