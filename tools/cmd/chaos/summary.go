package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/graphrag/graphrag/pkg/storeoutage"
)

// A summary row is one of the targets of the platform's reliability and scale goals,
// with what the suite measured for it.
type summaryRow struct {
	measure, measured string
	met               bool
}

// The targets, in the order of the summary table.
const (
	measureCluster = "JetStream cluster R3, leader or any node killed mid-indexing"
	measureShards  = "50 corpora at once: time to all complete, 4 graphers vs 1"
	measureNeo4j   = "Neo4j down 5 min while indexing"
	measureMilvus  = "Milvus down 5 min while indexing"
	measureRolling = "rolling restart of every service under query load"
)

var targets = []struct{ measure, target string }{
	{measureCluster, "20 runs, 0 lost, 0 extra, 0 dead letters"},
	{measureShards, "≤ 0.4×"},
	{measureNeo4j, "0 dead letters, resumes within 30 s of recovery"},
	{measureMilvus, "0 dead letters, resumes within 30 s of recovery"},
	{measureRolling, "0 lost, ≥ 99.9 % of queries answered"},
}

func targetOf(measure string) string {
	for _, t := range targets {
		if t.measure == measure {
			return t.target
		}
	}
	return ""
}

// maxRatio is the shards target: the most graphers take at most this share of one
// grapher's time.
const maxRatio = 0.4

// summaryRows are the targets the reports measured.
func summaryRows(reports []scenarioReport) []summaryRow {
	var rows []summaryRow
	for _, r := range reports {
		if len(r.runs) == 0 {
			continue
		}
		switch scenario := r.runs[0].scenario; {
		case scenario == "cluster":
			lost, extra, changed, dl, failed := r.totals()
			rows = append(rows, summaryRow{measure: measureCluster,
				measured: fmt.Sprintf("%d runs, %d lost, %d extra, %d changed, %d dead letters, %d failed runs", len(r.runs), lost, extra, changed, dl, failed),
				met:      len(r.runs) >= 20 && lost+extra+changed+failed == 0 && dl == 0})
		case scenario == "rolling":
			lost, extra, changed, dl, failed := r.totals()
			sent, answered := 0, 0
			for _, run := range r.runs {
				sent, answered = sent+run.sent, answered+run.answered
			}
			share := 0.0
			if sent > 0 {
				share = float64(answered) / float64(sent)
			}
			rows = append(rows, summaryRow{measure: measureRolling,
				measured: fmt.Sprintf("%d runs, %d lost, %d extra, %d changed, %d dead letters; %d of %d questions answered (%.2f %%)", len(r.runs), lost, extra, changed, dl, answered, sent, 100*share),
				met:      lost+extra+changed+failed == 0 && dl == 0 && share >= minAnswered})
		case strings.HasPrefix(scenario, "outage"):
			for _, run := range r.runs {
				rows = append(rows, outageRow(run))
			}
		case scenario == "shards":
			rows = append(rows, shardsRow(r))
		}
	}
	return rows
}

func (r scenarioReport) totals() (lost, extra, changed int, dl uint64, failed int) {
	for _, run := range r.runs {
		l, e, c := run.diff.total()
		lost, extra, changed, dl = lost+l, extra+e, changed+c, dl+run.deadLettered
		if !run.passed() {
			failed++
		}
	}
	return lost, extra, changed, dl, failed
}

func outageRow(run runResult) summaryRow {
	row := summaryRow{measure: measureNeo4j}
	if run.scenario == "outage Milvus" {
		row.measure = measureMilvus
	}
	o := run.outage
	if o == nil {
		row.measured = "no outage: " + outcome(run)
		return row
	}
	lost, extra, changed := run.diff.total()
	resumed := "did not resume within 5 min"
	if o.Resumed >= 0 {
		resumed = fmt.Sprintf("resumed %.1f s after recovery", o.Resumed.Seconds())
	}
	graph := "graph identical to the uninterrupted run's"
	if lost+extra+changed > 0 || len(run.self) > 0 {
		graph = fmt.Sprintf("graph: %d lost, %d extra, %d changed, %d report problems", lost, extra, changed, len(run.self))
	}
	row.measured = fmt.Sprintf("down %s; %d dead letters; %s; questions meanwhile: %s; %s", o.Down.Round(time.Second), run.deadLettered,
		resumed, answersText(o), graph)
	if run.err != nil && !strings.Contains(run.err.Error(), "questions during the outage") {
		row.measured += "; error: " + run.err.Error()
	}
	row.met = run.passed() && o.Resumed >= 0 && o.Resumed <= resumeTarget && o.Down >= 5*time.Minute
	return row
}

func answersText(o *storeoutage.Report) string {
	if len(o.Answers) == 0 {
		return "none answered"
	}
	return storeoutage.Codes(o.Answers)
}

func shardsRow(r scenarioReport) summaryRow {
	row := summaryRow{measure: measureShards}
	all := append([]runResult{r.baseline}, r.runs...)
	took := map[int]time.Duration{}
	var parts []string
	var kill *runResult
	for i, run := range all {
		if run.shard == nil {
			continue
		}
		if run.shard.killed {
			kill = &all[i]
			continue
		}
		took[run.shard.graphers] = run.took
		parts = append(parts, fmt.Sprintf("%d grapher(s) %s", run.shard.graphers, run.took.Round(time.Second)))
	}
	most := 0
	for g := range took {
		most = max(most, g)
	}
	ok := r.baseline.passed()
	for _, run := range r.runs {
		ok = ok && run.passed()
	}
	if one, has := took[1]; has && most > 1 && one > 0 {
		ratio := took[most].Seconds() / one.Seconds()
		parts = append(parts, fmt.Sprintf("%d vs 1: %.2f×", most, ratio))
		row.met = ok && most >= 4 && ratio <= maxRatio
	}
	if kill != nil {
		lost, extra, changed := kill.diff.total()
		parts = append(parts, fmt.Sprintf("%d graphers, %s killed: %s, %d lost, %d extra, %d changed, %d dead letters", kill.shard.graphers,
			join(kill.kills), kill.took.Round(time.Second), lost, extra, changed, kill.deadLettered))
	}
	if !ok {
		parts = append(parts, "some runs failed (see the scenario's table)")
	}
	row.measured = strings.Join(parts, "; ")
	return row
}

// provenance is where and how the summary was measured.
type provenance struct{ date, commit, machine, command string }

func (p provenance) String() string {
	return fmt.Sprintf("%s, commit %s, %s: `%s`", p.date, p.commit, p.machine, p.command)
}

// measureProvenance describes this run: the date, the commit (read at the start), the
// machine with its load average at start (loadStart) and now.
func measureProvenance(command, commit, loadStart string) provenance {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return provenance{date: time.Now().UTC().Format("2006-01-02"), commit: commit, command: command,
		machine: fmt.Sprintf("%d vCPU (%s), load average %s at start, %s at the end", runtime.NumCPU(), model, loadStart, loadAverage())}
}

// gitCommit is the commit checked out, with -dirty when tracked files differ from it
// (the binaries were built from the work tree).
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if out, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		commit += "-dirty"
	}
	return commit
}

// loadAverage is the one-minute load average ("?" where /proc/loadavg is missing).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

const (
	summaryBegin  = "<!-- chaos-summary:begin (tools/cmd/chaos -doc rewrites the rows it measured) -->"
	summaryEnd    = "<!-- chaos-summary:end -->"
	summaryHeader = "| measure | target | measured | met | when, where, how |\n|---|---|---|---|---|\n"
)

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (r summaryRow) line(p provenance) string {
	return fmt.Sprintf("| %s | %s | %s | %s | %s |", r.measure, targetOf(r.measure), cell(r.measured), yesNo(r.met), cell(p.String()))
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "/"), "\n", " ") }

// renderSummary is the summary table of this run's targets.
func renderSummary(rows []summaryRow, p provenance) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "## Targets\n\n%s", summaryHeader)
	measured := map[string]summaryRow{}
	for _, r := range rows {
		measured[r.measure] = r
	}
	for _, t := range targets {
		if r, ok := measured[t.measure]; ok {
			sb.WriteString(r.line(p) + "\n")
		} else {
			fmt.Fprintf(&sb, "| %s | %s | not run | - | - |\n", t.measure, t.target)
		}
	}
	return sb.String()
}

// updateDoc rewrites the summary table between the markers of the Markdown file path:
// the rows measured now replace theirs, the others stay as they were.
func updateDoc(path string, rows []summaryRow, p provenance) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("updating the summary: %w", err)
	}
	text := string(b)
	i, j := strings.Index(text, summaryBegin), strings.Index(text, summaryEnd)
	if i < 0 || j < i {
		return fmt.Errorf("updating the summary: %s has no %q … %q block", path, summaryBegin, summaryEnd)
	}
	old := map[string]string{}
	for line := range strings.Lines(text[i+len(summaryBegin) : j]) {
		line = strings.TrimSpace(line)
		if cells := strings.Split(line, "|"); len(cells) > 2 {
			old[strings.TrimSpace(cells[1])] = line
		}
	}
	measured := map[string]summaryRow{}
	for _, r := range rows {
		measured[r.measure] = r
	}
	var sb strings.Builder
	sb.WriteString(summaryBegin + "\n" + summaryHeader)
	for _, t := range targets {
		switch r, ok := measured[t.measure]; {
		case ok:
			sb.WriteString(r.line(p) + "\n")
		case old[t.measure] != "":
			sb.WriteString(old[t.measure] + "\n")
		default:
			fmt.Fprintf(&sb, "| %s | %s | not measured yet | - | - |\n", t.measure, t.target)
		}
	}
	out := text[:i] + sb.String() + text[j:]
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return fmt.Errorf("updating the summary: %w", err)
	}
	return nil
}
