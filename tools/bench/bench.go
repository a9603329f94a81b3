package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// handMarker starts the part of docs/benchmarks.md that is measured by hand (runs too
// long or too manual for the bench, such as 100k-chunk indexing in a memory
// group): a regeneration keeps it as it is.
const handMarker = "<!-- Measured by hand below this line: the bench keeps it when it regenerates the file. -->"

// handMeasured returns the part of the file at path from handMarker on, or "" when the
// file does not exist or has no marker.
func handMeasured(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the hand-measured sections of %s: %w", path, err)
	}
	i := strings.Index(string(b), handMarker)
	if i < 0 {
		return "", nil
	}
	return string(b[i:]), nil
}

// benchConfig is what the bench runs.
type benchConfig struct {
	out       string
	quick     bool
	only      []string
	extractor string // prebuilt extractor binary; empty: go build it
	graphrag  string // prebuilt graphrag binary for the realistic section; empty: go build it
	workDir   string
	corpusDir string // base of the realistic corpus; "" = the embedded HotpotQA sample
	waves     int    // resummarize: waves the corpus is published in
	wavesMode string // resummarize: "complete", "streaming" or "" (both)
	// realisticSizes overrides the realistic section's corpus sizes (passages).
	realisticSizes []int
	log            io.Writer // progress lines
}

// benchSection is one part of docs/benchmarks.md.
type benchSection struct {
	name  string
	title string
	run   func(ctx context.Context, cfg *benchConfig, r *benchReport) error
}

func benchSections() []benchSection {
	return []benchSection{
		{"realistic", "Realistic corpora: indexing and retrieval at real entity density", benchRealistic},
		{"retrieval", "Retrieval latency on a synthetic corpus, stores written directly", benchRetrieval},
		{"pipeline", "Pipeline throughput by extractor replicas", benchPipeline},
		{"map", "Global search: map phase wall time", benchMapPhase},
		{"graph", "Leiden and PageRank by graph size", benchGraphAlgorithms},
		{"events", "Event codec and bus throughput", benchEvents},
		{"resummarize", "Community reports written while a corpus streams in", benchResummarize},
		{"globalcost", "Tokens sent to the model per global question", benchGlobalCost},
	}
}

// Run measures the platform and writes docs/benchmarks.md. Every figure is measured
// in this run on this machine; ratios compare figures of the same run, never a stored
// expectation.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := benchConfig{log: stderr}
	var only, writeCorpus, realisticSizes string
	var corpusDocs, corpusQuestions int
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.out, "out", "docs/benchmarks.md", "Markdown file to write (- for stdout)")
	fs.BoolVar(&cfg.quick, "quick", false, "small sizes only (a smoke test of every section, about a minute)")
	fs.StringVar(&only, "only", "", "comma-separated sections to run: realistic, retrieval, pipeline, map, graph, events, resummarize, globalcost (default all)")
	fs.StringVar(&cfg.extractor, "extractor-bin", "", "extractor binary for the pipeline section (default: go build ./services/extractor/cmd/extractor)")
	fs.StringVar(&cfg.graphrag, "graphrag-bin", "", "graphrag binary for the realistic section (default: go build ./cmd/graphrag)")
	fs.StringVar(&realisticSizes, "realistic-sizes", "", "realistic: comma-separated corpus sizes in passages (default 10000,100000; 600 with -quick)")
	fs.StringVar(&cfg.corpusDir, "corpus", "", "directory with corpus.jsonl and questions.jsonl to scale into the realistic corpora (default: the embedded HotpotQA development sample)")
	fs.IntVar(&cfg.waves, "waves", 10, "resummarize: number of waves the corpus is published in")
	fs.StringVar(&cfg.wavesMode, "waves-mode", "", "resummarize: only the complete or only the streaming configurations (default both)")
	fs.StringVar(&writeCorpus, "write-corpus", "", "write a realistic dataset for `graphrag eval -dataset` to this directory instead of benchmarking: -corpus-docs copies of the base corpus's passages with entity names rewritten per copy")
	fs.IntVar(&corpusDocs, "corpus-docs", 10000, "with -write-corpus: number of passages")
	fs.IntVar(&corpusQuestions, "corpus-questions", 1000, "with -write-corpus: number of questions, spread over the copies")
	fs.StringVar(&cfg.workDir, "work-dir", "", "directory for stores and binaries (default: a temporary directory, removed at the end)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go run ./tools/cmd/bench [-out docs/benchmarks.md] [-quick] [-only sections]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	for f := range strings.SplitSeq(realisticSizes, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return fmt.Errorf("bench: -realistic-sizes: %q is not a positive number of passages", f)
		}
		cfg.realisticSizes = append(cfg.realisticSizes, n)
	}
	if writeCorpus != "" {
		rc, err := loadRealCorpus(cfg.corpusDir)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if err := writeRealCorpus(rc, writeCorpus, corpusDocs, corpusQuestions); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		fmt.Fprintf(stderr, "bench: wrote %d passages and %d questions to %s\n", corpusDocs, corpusQuestions, writeCorpus)
		return nil
	}
	sections := benchSections()
	if only != "" {
		for name := range strings.SplitSeq(only, ",") {
			name = strings.TrimSpace(name)
			if !slices.ContainsFunc(sections, func(s benchSection) bool { return s.name == name }) {
				return fmt.Errorf("bench: unknown section %q", name)
			}
			cfg.only = append(cfg.only, name)
		}
	}
	if cfg.workDir == "" {
		dir, err := os.MkdirTemp("", "graphrag-bench-")
		if err != nil {
			return fmt.Errorf("bench: creating a work directory: %w", err)
		}
		defer os.RemoveAll(dir)
		cfg.workDir = dir
	} else if err := os.MkdirAll(cfg.workDir, 0o750); err != nil {
		return fmt.Errorf("bench: creating the work directory: %w", err)
	}

	r := newBenchReport(cfg.quick, cfg.only)
	start := time.Now()
	for _, s := range sections {
		if len(cfg.only) > 0 && !slices.Contains(cfg.only, s.name) {
			continue
		}
		fmt.Fprintf(stderr, "bench: %s...\n", s.name)
		t0 := time.Now()
		r.section(s)
		if err := s.run(ctx, &cfg, r); err != nil {
			return fmt.Errorf("bench %s: %w", s.name, err)
		}
		fmt.Fprintf(stderr, "bench: %s done in %s\n", s.name, time.Since(t0).Round(time.Second))
	}
	r.footer(time.Since(start))
	if cfg.out == "-" {
		_, err := io.WriteString(stdout, r.String())
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o750); err != nil {
		return fmt.Errorf("bench: creating %s: %w", filepath.Dir(cfg.out), err)
	}
	doc := r.String()
	if kept, err := handMeasured(cfg.out); err != nil {
		return fmt.Errorf("bench: %w", err)
	} else if kept != "" {
		doc += "\n" + kept
	}
	if err := os.WriteFile(cfg.out, []byte(doc), 0o644); err != nil {
		return fmt.Errorf("bench: writing %s: %w", cfg.out, err)
	}
	fmt.Fprintf(stderr, "bench: wrote %s in %s\n", cfg.out, time.Since(start).Round(time.Second))
	return nil
}

// progress prints a progress line.
func (c *benchConfig) progress(format string, args ...any) {
	if c.log != nil {
		fmt.Fprintf(c.log, "  "+format+"\n", args...)
	}
}

// command is the command line that reproduces one section.
func (c *benchConfig) command(section string) string {
	cmd := "go run ./tools/cmd/bench -only " + section
	if c.quick {
		cmd += " -quick"
	}
	return cmd + " -out -"
}

// benchMachine describes where the figures were measured.
type benchMachine struct {
	CPUs       int
	GOMAXPROCS int
	CPUModel   string
	MemTotal   string
	GoVersion  string
	OSArch     string
	Commit     string
}

func benchReadMachine() benchMachine {
	m := benchMachine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		OSArch: runtime.GOOS + "/" + runtime.GOARCH, CPUModel: "unknown", MemTotal: "unknown", Commit: "unknown"}
	if v, ok := benchProcField("/proc/cpuinfo", "model name"); ok {
		m.CPUModel = v
	}
	if v, ok := benchProcField("/proc/meminfo", "MemTotal"); ok {
		var kb int64
		if _, err := fmt.Sscanf(v, "%d", &kb); err == nil {
			m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	// Best effort: the figures belong to a revision, when there is one.
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			m.Commit += " (with uncommitted changes in the work tree)"
		}
	}
	return m
}

// benchProcField returns the value of the first "key : value" line of a /proc file.
func benchProcField(path, key string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// benchReport accumulates the Markdown document.
type benchReport struct {
	b     strings.Builder
	quick bool
}

func newBenchReport(quick bool, only []string) *benchReport {
	r := &benchReport{quick: quick}
	m := benchReadMachine()
	r.line("# Benchmarks")
	r.line("")
	r.line("Generated by `go run ./tools/cmd/bench` (`make bench`); do not edit by hand down to the line that starts the")
	r.line("sections measured by hand, which a regeneration keeps. Every generated figure was measured in one")
	r.line("run on the machine described here; ratios compare figures of that same run. Targets come from")
	r.line("the issue that asked for them; a peer is another implementation measured in the same run.")
	r.line("")
	r.table([]string{"", ""}, [][]string{
		{"date", time.Now().UTC().Format("2006-01-02 15:04 UTC")},
		{"command", "`" + benchCommandLine(quick, only) + "`"},
		{"commit", m.Commit},
		{"CPU", fmt.Sprintf("%s, `nproc` = %d, GOMAXPROCS = %d", m.CPUModel, m.CPUs, m.GOMAXPROCS)},
		{"memory", m.MemTotal},
		{"load average at start", benchLoadAvg() + " (1, 5, 15 min)"},
		{"Go", m.GoVersion + " " + m.OSArch},
		{"mode", map[bool]string{true: "quick (small sizes: a smoke test, not the reference figures)", false: "full"}[quick]},
	})
	r.line("")
	r.line("The machine is shared: other jobs ran during the measurements (see the load average of each")
	r.line("section; a load above the number of CPUs means the benchmark got a fraction of them). Compare")
	r.line("figures of one section with each other rather than across runs.")
	return r
}

func benchCommandLine(quick bool, only []string) string {
	cmd := "go run ./tools/cmd/bench"
	if quick {
		cmd += " -quick"
	}
	if len(only) > 0 {
		cmd += " -only " + strings.Join(only, ",")
	}
	return cmd
}

func (r *benchReport) line(s string) {
	r.b.WriteString(s)
	r.b.WriteByte('\n')
}

func (r *benchReport) linef(format string, args ...any) { r.line(fmt.Sprintf(format, args...)) }

func (r *benchReport) section(s benchSection) {
	r.line("")
	r.linef("<a id=\"%s\"></a>", s.name)
	r.linef("## %s", s.title)
	r.line("")
	r.linef("_Load average (1, 5, 15 min) when the section started: %s._", benchLoadAvg())
	r.line("")
}

// benchLoadAvg is the first three fields of /proc/loadavg: other work on a shared machine
// skews the figures, and this says how much there was.
func benchLoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// command writes the command that reproduces the section.
func (r *benchReport) command(cmd string) {
	r.linef("Command: `%s`", cmd)
	r.line("")
}

func (r *benchReport) table(header []string, rows [][]string) {
	r.line("| " + strings.Join(header, " | ") + " |")
	seps := make([]string, len(header))
	for i := range seps {
		seps[i] = "---"
	}
	r.line("|" + strings.Join(seps, "|") + "|")
	for _, row := range rows {
		r.line("| " + strings.Join(row, " | ") + " |")
	}
}

func (r *benchReport) footer(took time.Duration) {
	r.line("")
	r.line("Figures against real servers (Neo4j + GDS, Milvus, the model server) need those servers")
	r.line("and are measured by the integration benchmarks: [benchmarks-backends.md](benchmarks-backends.md).")
	r.line("")
	r.linef("_The whole run took %s._", took.Round(time.Second))
}

func (r *benchReport) String() string { return r.b.String() }

// benchCost is the cost of one call of a function, measured by repetition.
type benchCost struct {
	ns     float64 // per call
	bytes  int64   // allocated per call
	allocs int64   // allocations per call
	runs   int
}

// benchRepeat calls fn in growing batches until the calls took atLeast in all, as
// testing.Benchmark does, and returns the cost of one call. Allocation counts come from
// runtime.MemStats around each batch.
func benchRepeat(fn func() error, atLeast time.Duration) (benchCost, error) {
	var before, after runtime.MemStats
	var elapsed time.Duration
	var bytes, mallocs uint64
	total, n := 0, 1
	for {
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		for range n {
			if err := fn(); err != nil {
				return benchCost{}, err
			}
		}
		elapsed += time.Since(t0)
		runtime.ReadMemStats(&after)
		total += n
		bytes += after.TotalAlloc - before.TotalAlloc
		mallocs += after.Mallocs - before.Mallocs
		if elapsed >= atLeast {
			break
		}
		per := max(elapsed/time.Duration(total), time.Nanosecond)
		n = int(min(max((atLeast-elapsed)*6/5/per, 1), time.Duration(100*n)))
	}
	return benchCost{ns: float64(elapsed.Nanoseconds()) / float64(total), bytes: int64(bytes) / int64(total),
		allocs: int64(mallocs) / int64(total), runs: total}, nil
}

// repeatFor is how long benchRepeat repeats one measurement.
func (c *benchConfig) repeatFor() time.Duration {
	if c.quick {
		return 100 * time.Millisecond
	}
	return time.Second
}

// errBenchCheck reports a measurement that went wrong (not a slow one: a wrong one, such
// as a pipeline that lost messages).
var errBenchCheck = errors.New("benchmark check failed")

// Formatting helpers.

func benchFmtMs(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}

func benchFmtFloat(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func benchFmtBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func benchFmtCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// benchPercentile returns the p-th percentile (0..100) of sorted durations, nearest rank.
func benchPercentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
