package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// promtool finds promtool, installing Debian's prometheus package when it is missing
// and this is a Debian machine where the test may (root, apt-get); otherwise the test
// is skipped with the reason.
var promtool = sync.OnceValues(func() (string, error) {
	if p, err := exec.LookPath("promtool"); err == nil {
		return p, nil
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		return "", fmt.Errorf("promtool is not installed (apt-get install prometheus provides it)")
	}
	install := func(args ...string) ([]byte, error) {
		cmd := exec.Command(apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install("install", "-y", "--no-install-recommends", "prometheus"); err != nil { // the package lists may be missing or stale
		if upd, uerr := install("update"); uerr != nil {
			return "", fmt.Errorf("promtool is not installed and apt-get update failed: %w\n%s", uerr, upd)
		}
		if out, err := install("install", "-y", "--no-install-recommends", "prometheus"); err != nil {
			return "", fmt.Errorf("promtool is not installed and apt-get install prometheus failed: %w\n%s", err, out)
		}
	}
	return exec.LookPath("promtool")
})

func needPromtool(t *testing.T) string {
	t.Helper()
	p, err := promtool()
	if err != nil {
		t.Skipf("skipping the promtool checks: %v", err)
	}
	return p
}

func runPromtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(needPromtool(t), args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// The alert rules are valid, and promtool's unit tests show each alert firing on the
// series it is about, and not before.
func TestAlertRules(t *testing.T) {
	runPromtool(t, "prometheus", "check", "rules", "alerts.yaml")
	runPromtool(t, "prometheus", "test", "rules", "alerts_test.yaml")
}

type dashboard struct {
	UID    string `json:"uid"`
	Title  string `json:"title"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Desc       string `json:"description"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("grafana", "graphrag.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("grafana/graphrag.json: %v", err)
	}
	return d
}

// dashboardExprs are the dashboard's queries with Grafana's variables given values.
func dashboardExprs(t *testing.T, d dashboard) []string {
	t.Helper()
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, strings.ReplaceAll(tg.Expr, "$__rate_interval", "5m"))
		}
	}
	return out
}

// The dashboard is well formed (ids unique, every graph on the datasource variable and
// described), and every query parses: promtool checks them as recording rules.
func TestDashboard(t *testing.T) {
	d := readDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Error("the dashboard needs a uid and a title")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || p.Desc == "" || len(p.Targets) == 0 {
			t.Errorf("panel %q: want the ${datasource} variable, a description and queries", p.Title)
		}
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range dashboardExprs(t, d) {
		q, _ := json.Marshal(e) // a JSON string is a YAML string
		fmt.Fprintf(&rules, "      - record: dashboard:query_%d\n        expr: %s\n", i, q)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard_rules.yaml"), []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, dir, "check", "rules", "dashboard_rules.yaml")
}

var (
	// braces and groupings hold label names, not metrics.
	labelParts = regexp.MustCompile(`\{[^}]*\}|\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promqlWord = map[string]bool{
		"histogram_quantile": true, "min_over_time": true, "max_over_time": true, "avg_over_time": true,
		"sum_over_time": true, "count_over_time": true, "label_replace": true, "label_join": true,
	}
	histogramSuffix = regexp.MustCompile(`_(bucket|count|sum)$`)
	documentedName  = regexp.MustCompile("(?m)^\\| `([a-z_:]+)`")
)

// metricsIn returns the metric names an expression reads (histogram series reduced to
// the histogram's name).
func metricsIn(expr string) []string {
	var out []string
	for _, id := range identifier.FindAllString(labelParts.ReplaceAllString(expr, " "), -1) {
		if !strings.Contains(id, "_") || promqlWord[id] || strings.HasPrefix(id, "dashboard:") {
			continue
		}
		out = append(out, histogramSuffix.ReplaceAllString(id, ""))
	}
	return out
}

// Every metric the alerts and the dashboard use is in docs/operations.md's metric table,
// so that a renamed metric fails here rather than in an empty graph.
func TestMonitoringUsesDocumentedMetrics(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range documentedName.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	if len(documented) < 20 {
		t.Fatalf("found %d metrics in docs/operations.md's table: the table's format changed?", len(documented))
	}
	rules, err := os.ReadFile(filepath.Join("prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, m := range regexp.MustCompile(`(?s)expr: (>-\n.*?|[^\n]*)\n\s+(?:for|labels):`).FindAllStringSubmatch(string(rules), -1) {
		exprs = append(exprs, m[1])
	}
	if len(exprs) < 6 {
		t.Fatalf("found %d alert expressions, want every rule's", len(exprs))
	}
	exprs = append(exprs, dashboardExprs(t, readDashboard(t))...)
	var missing []string
	for _, e := range exprs {
		for _, m := range metricsIn(e) {
			if !documented[m] && !slices.Contains(missing, m) {
				missing = append(missing, m)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("metrics used but not in docs/operations.md: %v", missing)
	}
}
