package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/graphrag/graphrag/pkg/docread"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/service"
)

// runDelete publishes a deletion event per document id (or one corpus drop) and, with
// -wait, waits until the pipeline has carried them through every store.
func runDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("delete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var nf natsFlags
	nf.register(fs)
	corpus := fs.String("corpus", "", "corpus name (required)")
	all := fs.Bool("all", false, "drop the whole corpus: delete every document published before this command")
	reason := fs.String("reason", "", "free text recorded in the event (who asked, a ticket)")
	wait := fs.Duration("wait", 0, "wait up to this long for the deletions to reach every store (exit status 1 if they do not)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: graphrag delete -corpus NAME [flags] ID...   or   graphrag delete -corpus NAME -all")
		fmt.Fprintln(stderr, "An ID is a document id, or the path a file was published with (relative to the directory given to publish).")
		fs.PrintDefaults()
	}
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if err := events.ValidateCorpus(*corpus); err != nil {
		return fmt.Errorf("-corpus: %w", err)
	}
	if *all == (fs.NArg() > 0) {
		fs.Usage()
		return errors.New("give document ids, or -all to drop the corpus, not both")
	}
	b, closeFn, err := nf.connect(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	if *all {
		d, err := pipeline.DropCorpus(ctx, b, *corpus, *reason)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "corpus %s: drop ordered (event %s, sequence %d): every document published before it is deleted\n", d.Corpus, d.EventID, d.Seq)
	} else {
		for _, arg := range fs.Args() {
			// A path names the document graphrag publish made of it (the same id when
			// the path is one).
			id := docread.ID(arg)
			d, err := pipeline.PublishDeletion(ctx, b, *corpus, id, *reason)
			if err != nil {
				return err
			}
			name := id
			if id != arg {
				name = fmt.Sprintf("%s (id %q)", arg, id)
			}
			fmt.Fprintf(stdout, "%s: %s (event %s, sequence %d)\n", name, deletionStatus(d.Known), d.EventID, d.Seq)
		}
	}
	if *wait <= 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	st, err := pipeline.WaitComplete(wctx, b, *corpus, 500*time.Millisecond, nil)
	if err != nil {
		printStatus(stdout, st)
		return err
	}
	fmt.Fprintf(stdout, "corpus %s: every store is up to date\n", *corpus)
	return nil
}

// deletionStatus says what a deletion will do, from what the pipeline knew of the
// document when it was published.
func deletionStatus(k pipeline.Known) string {
	switch k {
	case pipeline.KnownIndexed:
		return "deletion ordered"
	case pipeline.KnownDeleted:
		return "already deleted: nothing to delete (the event is recorded; a version published just before it is deleted too)"
	default:
		return "not indexed: nothing to delete (the event is recorded; a version published just before it is deleted too)"
	}
}
