package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/docread"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/pipeline"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
)

// natsFlags are the connection flags of the commands that talk to a running platform.
type natsFlags struct {
	URL, Creds, NKey, CA, Cert, Key string
}

func (n *natsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&n.URL, "nats-url", "nats://127.0.0.1:4222", "NATS server of the platform (graphrag up listens on 127.0.0.1:4222)")
	fs.StringVar(&n.Creds, "nats-creds", "", "NATS credentials file")
	fs.StringVar(&n.NKey, "nats-nkey", "", "NATS NKey seed file")
	fs.StringVar(&n.CA, "nats-tls-ca", "", "TLS CA file")
	fs.StringVar(&n.Cert, "nats-tls-cert", "", "TLS client certificate file")
	fs.StringVar(&n.Key, "nats-tls-key", "", "TLS client key file")
}

func (n *natsFlags) connect(ctx context.Context) (*bus.Bus, func(), error) {
	nc, err := bus.Connect(ctx, bus.ConnConfig{URL: n.URL, Name: "graphrag-cli", CredsFile: n.Creds, NKeySeedFile: n.NKey,
		TLS: bus.TLSFiles{CAFile: n.CA, CertFile: n.Cert, KeyFile: n.Key}})
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", n.URL, err)
	}
	b, err := bus.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	// The services provision the streams (with their replica count); the CLI provisions
	// only a platform that has never run, so that publishing first works, and never
	// rewrites a running platform's settings.
	if _, err := b.JetStream().Stream(ctx, pipeline.StreamName(events.KindDocuments)); err != nil {
		if err := pipeline.Provision(ctx, b, pipeline.DefaultTopology()); err != nil {
			nc.Close()
			return nil, nil, err
		}
	}
	return b, nc.Close, nil
}

func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var nf natsFlags
	nf.register(fs)
	corpus := fs.String("corpus", "", "corpus name (required)")
	idPrefix := fs.String("id-prefix", "", "prefix of every document id; ids are paths relative to each directory given, so two directories with the same file names need different prefixes (e.g. -id-prefix a/)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: graphrag publish -corpus NAME [flags] PATH...")
		fs.PrintDefaults()
	}
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if err := events.ValidateCorpus(*corpus); err != nil {
		return fmt.Errorf("-corpus: %w", err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no PATH given")
	}
	if *idPrefix != "" && docread.ID(*idPrefix+"x") != *idPrefix+"x" {
		return fmt.Errorf("-id-prefix %q: an id may not begin with white space or one of . / \\ - nor hold control characters", *idPrefix)
	}
	// A path that does not exist is a mistake to report before anything is published.
	for _, p := range fs.Args() {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("nothing published: %w", err)
		}
	}
	b, closeFn, err := nf.connect(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	sum, err := publishPaths(ctx, b, *corpus, fs.Args(), publishOptions{idPrefix: *idPrefix, progress: stderr})
	fmt.Fprintf(stdout, "published %d, unchanged %d, skipped %d, failed %d\n", sum.Published, sum.Duplicate, len(sum.Skipped), sum.Failed)
	for _, r := range sum.Renamed {
		fmt.Fprintf(stdout, "  %s: published as id %q (an id holds no control character, invalid UTF-8 or leading dot, and is in NFC)\n", r.Path, r.ID)
	}
	for _, s := range sum.Skipped {
		fmt.Fprintf(stdout, "  skipped %s: %v\n", s.Path, s.Err)
	}
	if err != nil {
		return err
	}
	if sum.Collisions > 0 {
		return fmt.Errorf("%d files were not published: their document id is another file's (files of two directories: give each its own -id-prefix; two names in one directory that differ only in what an id cannot hold: rename one)", sum.Collisions)
	}
	if sum.Failed > 0 {
		return fmt.Errorf("%d documents failed to publish", sum.Failed)
	}
	if sum.Published+sum.Duplicate == 0 {
		return fmt.Errorf("nothing published: no file under %s could be read as a document (%d skipped)", strings.Join(fs.Args(), ", "), len(sum.Skipped))
	}
	return nil
}

// stateRecords opens the document records, which say which documents are unchanged, or
// returns nil: a platform that has not provisioned its buckets yet has none, and a
// publisher whose NATS user may publish to its corpus only (deploy/nats) may not read
// them, which costs it the "unchanged" count, not the publication.
func stateRecords(ctx context.Context, b *bus.Bus) bus.KV {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	kv, err := b.KV(ctx, schema.StateBucket)
	if err != nil {
		return nil
	}
	return kv
}

// unchanged reports whether the document is indexed with this title and text, so that
// publishing it again costs the pipeline only a record update. It is published anyway:
// a deletion may be on its way.
func unchanged(ctx context.Context, kv bus.KV, corpus, id, title, text string) bool {
	if kv == nil {
		return false
	}
	rec, _, err := pipeline.LoadDocument(ctx, kv, corpus, id)
	return err == nil && rec.Known() && !rec.Deleted && rec.Title == title && rec.ContentHash == events.Hash(text)
}

// publishOptions say how publishPaths names documents and reports progress.
type publishOptions struct {
	idPrefix string
	// progress receives a progress bar when it is a terminal, nothing otherwise (a bar
	// drawn with carriage returns leaves a stale line in a log).
	progress io.Writer
}

type skipped struct {
	Path string
	Err  error
}

type publishSummary struct {
	Published, Duplicate, Failed int
	// Collisions counts files not published because an earlier file of the same run has
	// their id; each is also in Skipped.
	Collisions int
	Skipped    []skipped
	// Renamed are the files published under an id other than their path (docread.ID).
	Renamed []renamed
}

type renamed struct{ Path, ID string }

type fileRef struct{ path, rel string }

// collect expands the arguments into files; a directory contributes every regular file
// below it (ids relative to the directory), a file its base name.
func collect(paths []string) ([]fileRef, []skipped) {
	var files []fileRef
	var skips []skipped
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			skips = append(skips, skipped{p, err})
			continue
		}
		if !st.IsDir() {
			files = append(files, fileRef{p, filepath.Base(p)})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				skips = append(skips, skipped{path, err})
				return nil
			}
			if d.IsDir() {
				if path != p && len(d.Name()) > 0 && d.Name()[0] == '.' {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				skips = append(skips, skipped{path, errors.New("not a regular file")})
				return nil
			}
			rel, _ := filepath.Rel(p, path)
			files = append(files, fileRef{path, rel})
			return nil
		})
		if err != nil {
			skips = append(skips, skipped{p, err})
		}
	}
	// Stable: of two files with one id, the one named first on the command line is kept.
	sort.SliceStable(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, skips
}

// documentFile is one file of the paths given, named and read as publish reads it: err
// says why it is not a document (Collision: its id is an earlier file's).
type documentFile struct {
	path, rel, id string
	doc           docread.Document
	err           error
	collision     bool
}

// readDocuments names and reads every file collect finds under paths, in order, and
// hands each to visit, with the reason a file is not a document. Two files of one run
// with the same id are a mistake (the second would replace the first): the second is a
// collision. It stops at the first error of visit or of ctx.
func readDocuments(ctx context.Context, files []fileRef, idPrefix string, visit func(documentFile) error) error {
	ids := map[string]string{} // id -> the file that has it
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		df := documentFile{path: f.path, rel: f.rel, id: docread.ID(idPrefix + f.rel)}
		if first, ok := ids[df.id]; ok {
			df.collision, df.err = true, fmt.Errorf("document id %q is already %s's", df.id, first)
		} else {
			ids[df.id] = f.path
			df.doc, df.err = docread.ReadFile(f.path)
		}
		if err := visit(df); err != nil {
			return err
		}
	}
	return nil
}

// publishPaths publishes every readable, supported file, reporting the others
// (readDocuments).
func publishPaths(ctx context.Context, b *bus.Bus, corpus string, paths []string, opts publishOptions) (publishSummary, error) {
	files, skips := collect(paths)
	sum := publishSummary{Skipped: skips}
	kv := stateRecords(ctx, b)
	bar := newProgress(len(files), opts.progress)
	defer func() { _ = bar.Finish() }()
	err := readDocuments(ctx, files, opts.idPrefix, func(f documentFile) error {
		defer func() { _ = bar.Add(1) }()
		if f.err != nil {
			if f.collision {
				sum.Collisions++
			}
			sum.Skipped = append(sum.Skipped, skipped{f.path, f.err})
			return nil
		}
		doc, id := f.doc, f.id
		same := unchanged(ctx, kv, corpus, id, doc.Title, doc.Text)
		_, err := pipeline.PublishDocument(ctx, b, events.Document{Corpus: corpus, ID: id, Title: doc.Title,
			Source: f.path, ContentType: doc.ContentType, Text: doc.Text})
		switch {
		case err != nil:
			sum.Failed++
			sum.Skipped = append(sum.Skipped, skipped{f.path, err})
		case same:
			sum.Duplicate++
		default:
			sum.Published++
		}
		if err == nil && id != filepath.ToSlash(opts.idPrefix+f.rel) {
			sum.Renamed = append(sum.Renamed, renamed{f.path, id})
		}
		return nil
	})
	return sum, err
}

// newProgress is a progress bar on w when w is a terminal, and a silent one otherwise.
func newProgress(n int, w io.Writer) *progressbar.ProgressBar {
	if !isTerminal(w) {
		return progressbar.NewOptions(n, progressbar.OptionSetWriter(io.Discard), progressbar.OptionSetVisibility(false))
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("publishing"),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
