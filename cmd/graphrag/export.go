package main

import (
	"archive/zip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/export"
	"github.com/graphrag/graphrag/pkg/platform"
	"github.com/graphrag/graphrag/pkg/platform/filelock"
	"github.com/graphrag/graphrag/pkg/platform/graphdrivers"
	"github.com/graphrag/graphrag/pkg/platform/vectordrivers"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/service"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// runExport writes a corpus's export into a directory: from the stores the backend
// flags name (the embedded data directory must not be in use), or with -api from a
// running query service's export route.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var common service.CommonFlags
	var backends platform.BackendFlags
	needs := platform.Needs{Graph: graphdrivers.All(), Vectors: vectordrivers.All(), Existing: true}
	common.Register(fs)
	backends.Register(fs, needs)
	setUsage(fs, stderr, "usage: graphrag export -corpus NAME -out DIR [-format jsonl|graphml|parquet] [-api URL]\n"+
		"Writes a corpus's graph, communities and passages into DIR: through a running query API with -api,\n"+
		"else from the stores of a data dir no other process holds.")
	corpus := fs.String("corpus", "", "corpus name (required)")
	format := fs.String("format", string(export.JSONL), "jsonl, graphml or parquet (Microsoft GraphRAG's tables)")
	out := fs.String("out", "", "directory to write the files into (required; created if needed)")
	api := fs.String("api", "", "query API base URL to export through (e.g. http://127.0.0.1:8080, with a running graphrag up); empty = open the stores")
	var token service.Secret
	fs.Var(&token, "api-token", "bearer token for -api (read on the corpus)")
	timeout := fs.Duration("timeout", 30*time.Minute, "time limit of the export through -api")
	if err := service.ParseFlags(fs, args, platform.EnvPrefix); err != nil {
		return err
	}
	if err := events.ValidateCorpus(*corpus); err != nil {
		return fmt.Errorf("-corpus: %w", err)
	}
	f, err := export.ParseFormat(*format)
	if err != nil {
		return fmt.Errorf("-format: %w", err)
	}
	if *out == "" {
		return errors.New("-out: a directory is required")
	}
	if *api != "" {
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		files, err := exportThroughAPI(ctx, *api, token.Value(), *corpus, f, *out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "exported %s as %s into %s: %s\n", *corpus, f, *out, strings.Join(files, ", "))
		return nil
	}
	p, err := platform.Open(ctx, common, backends, needs, "export", common.Logger(stderr))
	if errors.Is(err, filelock.ErrInUse) {
		return fmt.Errorf("%w; export from the running platform with -api (e.g. -api http://127.0.0.1:8080)", err)
	}
	if err != nil {
		return err
	}
	defer func() { _ = p.Close() }()
	if err := corpusExists(ctx, p.Vectors, *corpus); err != nil {
		return fmt.Errorf("%w (in the stores of -data-dir %s; with a running platform, use -api)", err, common.DataDir)
	}
	sum, err := export.Write(ctx, p.Graph, p.Vectors, *corpus, f, export.Dir(*out))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %s as %s into %s: %d entities, %d relationships, %d communities (%d reports), %d chunks: %s\n",
		*corpus, f, *out, sum.Entities, sum.Relationships, sum.Communities, sum.Reports, sum.Chunks, strings.Join(sum.Files, ", "))
	return nil
}

// corpusExists checks that the stores hold chunks of corpus: an export of a corpus they
// do not hold (a misspelt name, another data dir) would be empty and look successful.
func corpusExists(ctx context.Context, v vectorstore.Store, corpus string) error {
	n, err := v.Count(ctx, schema.Collection(corpus, schema.Chunks))
	if errors.Is(err, vectorstore.ErrNotFound) || (err == nil && n == 0) {
		return fmt.Errorf("corpus %s does not exist", corpus)
	}
	if err != nil {
		return fmt.Errorf("reading corpus %s: %w", corpus, err)
	}
	return nil
}

// exportThroughAPI downloads the export archive and unpacks it into dir.
func exportThroughAPI(ctx context.Context, api, token, corpus string, f export.Format, dir string) ([]string, error) {
	u := strings.TrimRight(api, "/") + "/v1/corpora/" + url.PathEscape(corpus) + "/export?format=" + url.QueryEscape(string(f))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("exporting through %s: %w", api, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("exporting through %s: %s: %s", api, resp.Status, strings.TrimSpace(string(msg)))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	// The archive goes to a temporary file first: zip reads its directory at the end.
	tmp, err := os.CreateTemp(dir, ".export-*.zip")
	if err != nil {
		return nil, fmt.Errorf("exporting through %s: %w", api, err)
	}
	defer func() { _ = tmp.Close(); _ = os.Remove(tmp.Name()) }()
	n, err := io.Copy(tmp, resp.Body)
	if err != nil {
		return nil, fmt.Errorf("exporting through %s: reading the archive: %w", api, err)
	}
	zr, err := zip.NewReader(tmp, n)
	if err != nil {
		return nil, fmt.Errorf("exporting through %s: the archive: %w", api, err)
	}
	var names []string
	for _, zf := range zr.File {
		if err := unpack(zf, dir); err != nil {
			return names, err
		}
		names = append(names, zf.Name)
	}
	return names, nil
}

// unpack writes one file of the archive into dir; names are the export's own flat
// file names, and any other is refused.
func unpack(zf *zip.File, dir string) error {
	if zf.Name != filepath.Base(zf.Name) || strings.HasPrefix(zf.Name, ".") {
		return fmt.Errorf("the archive holds an unexpected path %q", zf.Name)
	}
	rc, err := zf.Open()
	if err != nil {
		return fmt.Errorf("reading %s from the archive: %w", zf.Name, err)
	}
	defer rc.Close()
	w, err := os.Create(filepath.Join(dir, zf.Name))
	if err != nil {
		return fmt.Errorf("creating %s: %w", zf.Name, err)
	}
	if _, err := io.Copy(w, rc); err != nil {
		_ = w.Close()
		return fmt.Errorf("writing %s: %w", zf.Name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", zf.Name, err)
	}
	return nil
}
