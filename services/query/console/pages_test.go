//go:build browser

package console_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestAskStreamsAndCites(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "asking", chromedp.Navigate(s.base+"/ui/#/ask"),
		chromedp.WaitVisible(chromedp.CSS("#question")),
		chromedp.SendKeys(chromedp.CSS("#question"), "Which institute employs the scientist who chaired the Storm Hester inquiry?"),
		chromedp.Click(chromedp.CSS("#ask")),
		waitJS(`document.querySelector('#answer').dataset.done === '1'`))
	if n, _ := strconv.Atoi(jsString(t, b, `document.querySelector('#answer').dataset.deltas || '0'`)); n < 1 {
		t.Errorf("the answer arrived in %d delta events, want it streamed", n)
	}
	answer := textOf(b, t, "#answer")
	// The sample question's expected answer (examples/questions.jsonl).
	if !strings.Contains(strings.ToLower(answer), "marrow bay marine institute") {
		t.Errorf("answer %q does not name the Marrow Bay Marine Institute", answer)
	}
	chunk := jsString(t, b, `document.querySelector('#answer a.cite').dataset.chunk`)
	if chunk == "" {
		t.Fatalf("the answer has no citation link to a passage: %q", answer)
	}
	b.run(t, "opening the first citation", chromedp.Click(chromedp.CSS("#answer a.cite")),
		waitJS(`!!document.querySelector('#passage .passage-text')`))
	if got := jsString(t, b, `document.querySelector('#passage .passage-text').dataset.chunk`); got != chunk {
		t.Errorf("the citation opened chunk %q, want %q", got, chunk)
	}
	marks := jsString(t, b, `[...document.querySelectorAll('#passage mark')].map(m => m.textContent.toLowerCase()).join(',')`)
	if !strings.Contains(marks, "storm") && !strings.Contains(marks, "hester") && !strings.Contains(marks, "institute") {
		t.Errorf("highlighted terms %q, want some of the question's (storm, hester, institute)", marks)
	}
	if why := textOf(b, t, "#why-panel"); !strings.Contains(why, "lexical #") || !strings.Contains(why, "Linked entities") {
		t.Errorf("why panel lacks the lists with ranks or the linked entities: %.400s", why)
	}
	// Citations are told apart by title and place, and never show a raw chunk id.
	labels := strings.Split(jsString(t, b, `[...document.querySelectorAll('#citations li a')].map(a => a.dataset.chunk && a.textContent.includes(a.dataset.chunk) ? 'RAW ' + a.textContent : a.textContent).join('\n')`), "\n")
	t.Logf("citations: %q", labels)
	seen := map[string]bool{}
	for _, l := range labels {
		if seen[l] || strings.HasPrefix(l, "RAW ") || !strings.Contains(l, " · passage ") {
			t.Errorf("citation %q: want a unique \"title · passage n\" label (all: %q)", l, labels)
		}
		seen[l] = true
	}
	b.screenshot(t, "ask")

	b.run(t, "asking a global question", chromedp.SetValue(chromedp.CSS("#mode"), "global"),
		chromedp.SetValue(chromedp.CSS("#question"), "What are the main themes across the corpus?"),
		eval(`delete document.querySelector('#answer').dataset.done`),
		chromedp.Click(chromedp.CSS("#ask")),
		waitJS(`document.querySelector('#answer').dataset.done === '1'`))
	if why := textOf(b, t, "#why-panel"); !strings.Contains(why, "Communities mapped") {
		t.Errorf("a global answer's why panel lacks the communities mapped: %.400s", why)
	}
	if cites := textOf(b, t, "#citations"); strings.Contains(cites, "community c") {
		t.Errorf("a global answer cites reports by id, not title: %.400s", cites)
	}
	// Offline too, a global answer is prose that names the reports it cites by title.
	global := textOf(b, t, "#answer")
	if strings.Contains(global, "\n- ") || !strings.HasPrefix(global, "The most relevant theme is ") {
		t.Errorf("the global answer is not prose: %.600s", global)
	}
	for _, l := range strings.Split(jsString(t, b, `[...document.querySelectorAll('#citations li a')].map(a => a.textContent).join('\n')`), "\n") {
		if _, title, _ := strings.Cut(l, "report: "); title == "" || !strings.Contains(global, title) {
			t.Errorf("the global answer does not name the report it cites as %q", l)
		}
	}
	b.screenshot(t, "ask-global")
}

// TestAskOffersExamples: an empty Ask page offers a question about the whole corpus and
// about central entities; a click asks it.
func TestAskOffersExamples(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "opening Ask", chromedp.Navigate(s.base+"/ui/#/ask"),
		waitJS(`document.querySelectorAll('#examples button.example').length === 3`))
	examples := jsString(t, b, `[...document.querySelectorAll('#examples button.example')].map(b => b.textContent).join('|')`)
	parts := strings.Split(examples, "|")
	t.Logf("examples: %q", parts)
	if parts[0] != "What are the main themes across the corpus?" || !strings.HasPrefix(parts[1], "What do the documents say about ") {
		t.Errorf("examples %q: want the themes question, then questions about entities", parts)
	}
	b.run(t, "asking an example", chromedp.Click(chromedp.CSS(`#examples button.example:nth-of-type(2)`)),
		waitJS(`document.querySelector('#answer').dataset.done === '1'`))
	if q := jsString(t, b, `document.querySelector('#question').value`); q != parts[1] {
		t.Errorf("question %q, want the example clicked, %q", q, parts[1])
	}
	if a := textOf(b, t, "#answer"); strings.TrimSpace(a) == "" {
		t.Error("no answer to the example")
	}
}

func TestExplorerNeighbourhoodAndExpand(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "typeahead", chromedp.Navigate(s.base+"/ui/#/explore"),
		chromedp.WaitVisible(chromedp.CSS("#entity-search")),
		chromedp.SendKeys(chromedp.CSS("#entity-search"), "gullhead li"),
		waitJS(`[...document.querySelectorAll('#suggestions button')].some(b => b.firstChild.textContent === 'Gullhead Lighthouse')`),
		eval(`[...document.querySelectorAll('#suggestions button')].find(b => b.firstChild.textContent === 'Gullhead Lighthouse').click()`),
		waitJS(`!!document.querySelector('#graph').dataset.renderMs`))
	names := jsString(t, b, `window.graphrag.cy.nodes().map(n => n.data('name')).join('|')`)
	for _, want := range []string{"Gullhead Lighthouse", "Samuel Brede", "Elias Fenwick", "Corran Reef", "Marrow Bay"} {
		if !strings.Contains("|"+names+"|", "|"+want+"|") {
			t.Errorf("neighbourhood %q lacks %q", names, want)
		}
	}
	if d := textOf(b, t, "#details"); !strings.Contains(d, "Passages") || !strings.Contains(d, "Gullhead") {
		t.Errorf("node details lack the passages: %.300s", d)
	}
	// The legend names communities by their most central entity drawn, not by id.
	legend := jsString(t, b, `[...document.querySelectorAll('#legend a.community-name')].map(a => a.textContent).join('|')`)
	for _, l := range strings.Split(legend, "|") {
		if name := strings.TrimPrefix(l, "around "); name == l || !strings.Contains("|"+names+"|", "|"+name+"|") {
			t.Errorf("legend entry %q: want \"around\" a drawn entity's name (legend %q)", l, legend)
		}
	}
	b.screenshot(t, "explore")

	// Click, in the real canvas, a neighbour that has neighbours of its own not shown yet.
	before := jsString(t, b, `String(window.graphrag.cy.nodes().length)`)
	pos := jsString(t, b, `(() => { const n = window.graphrag.cy.$id('marrow bay'); const p = n.renderedPosition();
		const r = document.querySelector('#graph').getBoundingClientRect(); return (r.left + p.x) + ',' + (r.top + p.y); })()`)
	var x, y float64
	if _, err := fmt.Sscanf(pos, "%f,%f", &x, &y); err != nil {
		t.Fatalf("position of Marrow Bay %q: %v", pos, err)
	}
	b.run(t, "expanding Marrow Bay", chromedp.MouseClickXY(x, y),
		waitJS(`window.graphrag.cy.nodes().length > `+before),
		waitJS(`window.graphrag.cy.$id('marrow bay').hasClass('expanded')`))
	// Its neighbours (from the API) are all on the canvas now, but for document titles
	// (TestExplorerHidesDocumentTitles).
	missing := jsString(t, b, `(async () => { const r = await fetch('/v1/corpora/demo/entities/marrow%20bay?depth=1&limit=100').then(r => r.json());
		const titles = new Set((await fetch('/v1/corpora/demo/documents?limit=200').then(r => r.json())).documents.map(d => d.title));
		return r.neighbors.filter(n => window.graphrag.cy.$id(n.key).empty() && !titles.has(n.name)).map(n => n.name).join('|'); })()`)
	if missing != "" {
		t.Errorf("after expanding Marrow Bay, its neighbours %q are missing", missing)
	}
	b.screenshot(t, "explore-expanded")
}

// TestExplorerCapsEdges: a neighbourhood with more relationships than two per node
// draws the start entity's own and the strongest others, says so, and draws them all on
// a click.
func TestExplorerCapsEdges(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "a busy neighbourhood", chromedp.Navigate(s.base+"/ui/#/explore?entity=marrow%20bay&depth=2&limit=500"),
		waitJS(`!!document.querySelector('#graph').dataset.renderMs`))
	counts := jsString(t, b, `(async () => {
		const r = await fetch('/v1/corpora/demo/entities/marrow%20bay?depth=2&limit=500').then(r => r.json());
		const ids = new Set(window.graphrag.cy.nodes().map(n => n.id())); // document titles are not drawn
		const all = r.relationships.filter(e => ids.has(e.source) && ids.has(e.target)).length;
		return ids.size + ',' + all + ',' + window.graphrag.cy.edges().length; })()`)
	var nodes, all, drawn int
	if _, err := fmt.Sscanf(counts, "%d,%d,%d", &nodes, &all, &drawn); err != nil {
		t.Fatalf("counts %q: %v", counts, err)
	}
	t.Logf("%d nodes, %d relationships among them, %d drawn", nodes, all, drawn)
	if all <= max(60, 2*nodes) {
		t.Fatalf("the sample neighbourhood has %d relationships for %d nodes: not enough to be capped", all, nodes)
	}
	if drawn > max(60, 2*nodes) || !strings.Contains(textOf(b, t, "#graph-status"), fmt.Sprintf("Showing %d of %d relationships", drawn, all)) {
		t.Errorf("%d edges drawn of %d, status %q: want at most %d and the cap said", drawn, all, textOf(b, t, "#graph-status"), max(60, 2*nodes))
	}
	b.run(t, "showing all", chromedp.Click(chromedp.CSS("#show-all-edges")),
		waitJS(fmt.Sprintf(`window.graphrag.cy.edges().length === %d`, all)))
}

// labelOverlaps is a script that returns the pairs of drawn node labels whose boxes on
// screen overlap, and how many labels are drawn. A box is Cytoscape's own, less the 2
// model units of "margin of error" its bounds add on every side (src/collection/
// dimensions/bounds.js), which grow with the zoom though nothing is drawn there.
const labelOverlaps = `(() => {
	const cy = window.graphrag.cy;
	const m = 2 * cy.zoom();
	const boxes = cy.nodes().filter(n => n.style('label') !== '').map(n => {
		const b = n.renderedBoundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false });
		return [n.data('name'), { x1: b.x1 + m, x2: b.x2 - m, y1: b.y1 + m, y2: b.y2 - m }];
	});
	const bad = [];
	for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
		const [a, p] = boxes[i], [b, q] = boxes[j];
		if (p.x1 < q.x2 && q.x1 < p.x2 && p.y1 < q.y2 && q.y1 < p.y2) bad.push(a + ' / ' + b);
	}
	return JSON.stringify({ drawn: boxes.length, overlaps: bad });
})()`

type labelCheck struct {
	Drawn    int
	Overlaps []string
}

// TestExplorerLabelsDoNotOverlap: in a dense neighbourhood (depth 2 around Marrow Bay,
// about 170 nodes) no two drawn labels overlap, the start entity is labelled, and
// zooming in draws more labels, still apart.
func TestExplorerLabelsDoNotOverlap(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "a dense neighbourhood", chromedp.Navigate(s.base+"/ui/#/explore?entity=marrow%20bay&depth=2&limit=500"),
		waitJS(`!!document.querySelector('#graph').dataset.renderMs`))
	var fit labelCheck
	if err := json.Unmarshal([]byte(jsString(t, b, labelOverlaps)), &fit); err != nil {
		t.Fatal(err)
	}
	nodes, _ := strconv.Atoi(jsString(t, b, `String(window.graphrag.cy.nodes().length)`))
	t.Logf("%d nodes, %d labels drawn, overlapping: %q", nodes, fit.Drawn, fit.Overlaps)
	if len(fit.Overlaps) > 0 {
		t.Errorf("%d pairs of labels overlap: %q", len(fit.Overlaps), fit.Overlaps)
	}
	if fit.Drawn < 10 || fit.Drawn >= nodes {
		t.Errorf("%d of %d labels drawn: want the hubs' names, not none and not all", fit.Drawn, nodes)
	}
	if l := jsString(t, b, `window.graphrag.cy.$id('marrow bay').style('label')`); l != "Marrow Bay" {
		t.Errorf("the start entity's label is %q", l)
	}
	b.screenshot(t, "explore-labels")

	b.run(t, "zooming in", eval(`(() => { const cy = window.graphrag.cy; const p = cy.$id('marrow bay').renderedPosition();
		cy.zoom({ level: cy.zoom() * 3, renderedPosition: p }); })()`),
		waitJS(fmt.Sprintf(`Number(document.querySelector('#graph').dataset.labels) > %d`, fit.Drawn)))
	var zoomed labelCheck
	if err := json.Unmarshal([]byte(jsString(t, b, labelOverlaps)), &zoomed); err != nil {
		t.Fatal(err)
	}
	t.Logf("zoomed in: %d labels drawn", zoomed.Drawn)
	if len(zoomed.Overlaps) > 0 {
		t.Errorf("zoomed in, %d pairs of labels overlap: %q", len(zoomed.Overlaps), zoomed.Overlaps)
	}
	b.screenshot(t, "explore-labels-zoomed")
}

// TestExplorerHidesDocumentTitles: an entity named as a document and mentioned only in it
// is a document's title more than an entity; it is hidden unless asked for, and an entity
// that shares a document's title but other documents mention stays.
func TestExplorerHidesDocumentTitles(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "a neighbourhood", chromedp.Navigate(s.base+"/ui/#/explore?entity=marrow%20bay&depth=1&limit=500"),
		waitJS(`!!document.querySelector('#graph').dataset.renderMs`))
	has := func(name string) bool {
		return jsString(t, b, fmt.Sprintf(`String(window.graphrag.cy.nodes().some(n => n.data('name') === %q))`, name)) == "true"
	}
	// Both are neighbours of Marrow Bay in the API's answer.
	for _, name := range []string{"Gullhead Lighthouse and the Fenwick Family", "Marrow Bay Marine Institute"} {
		if jsString(t, b, fmt.Sprintf(`(async () => String((await fetch('/v1/corpora/demo/entities/marrow%%20bay?depth=1&limit=500').then(r => r.json())).neighbors.some(n => n.name === %q)))()`, name)) != "true" {
			t.Fatalf("%q is not a neighbour of Marrow Bay in the sample corpus", name)
		}
	}
	if has("Gullhead Lighthouse and the Fenwick Family") || !has("Marrow Bay Marine Institute") {
		t.Errorf("drawn: title node %v, entity named as a document %v; want false, true",
			has("Gullhead Lighthouse and the Fenwick Family"), has("Marrow Bay Marine Institute"))
	}
	if st := textOf(b, t, "#graph-status"); !strings.Contains(st, "document-title nodes hidden") {
		t.Errorf("status %q does not say title nodes are hidden", st)
	}
	b.run(t, "showing document titles", chromedp.Click(chromedp.CSS("#show-titles")),
		waitJS(`location.hash.includes('titles=1') && !!document.querySelector('#graph').dataset.renderMs && window.graphrag.cy.nodes().some(n => n.data('name') === 'Gullhead Lighthouse and the Fenwick Family')`))
}

func TestCommunityOpensWithMembers(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "opening a community", chromedp.Navigate(s.base+"/ui/#/communities"),
		chromedp.WaitVisible(chromedp.CSS("#tree a.community")),
		chromedp.Click(chromedp.CSS("#tree a.community")),
		waitJS(`document.querySelectorAll('#members li').length > 0`))
	title := textOf(b, t, "#tree a.community")
	if got := textOf(b, t, "#report-title"); got != title {
		t.Errorf("report title %q, want the clicked community's %q", got, title)
	}
	// The badge, not the title: the title is a link that opens the report instead.
	b.run(t, "opening a level below", chromedp.Click(chromedp.CSS("#tree details > summary .badge")),
		waitJS(`document.querySelectorAll('#tree details[open] .leaf, #tree details[open] details').length > 0`))
	b.screenshot(t, "communities")
}

func TestDashboardFollowsIndexing(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	b.run(t, "opening the dashboard", chromedp.Navigate(s.base+"/ui/#/dashboard"),
		waitJS(`document.querySelector('#corpus-state')?.textContent === 'complete'`))
	published := func() int {
		n, _ := strconv.Atoi(jsString(t, b, `document.querySelector('#stages tr[data-stage] td.num').textContent.replace(/,/g, '')`))
		return n
	}
	before := published()
	doc := filepath.Join(t.TempDir(), "dashboard_probe.md")
	if err := os.WriteFile(doc, []byte("# Harbour Tide Gauge\n\nThe Harbour Tide Gauge at Marrow Bay records the tide every six minutes. Keeper Samuel Brede read it during Storm Hester.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(graphragBin, "publish", "-corpus", "demo", "-nats-url", s.natsURL, doc).CombinedOutput(); err != nil {
		t.Fatalf("publishing: %v: %s", err, out)
	}
	b.run(t, "waiting for the new document to be indexed",
		waitJS(fmt.Sprintf(`(document.querySelector('#stages tr[data-stage] td.num')?.textContent || '0').replace(/,/g, '') > %d`, before)),
		waitJS(`document.querySelector('#corpus-state')?.textContent === 'complete'`))
	if got := published(); got != before+1 {
		t.Errorf("published %d after one more document, want %d", got, before+1)
	}
	b.screenshot(t, "dashboard")
}

// TestDashboardBarsWaitForEarlierStages: while a stage still has work, the bars of the
// stages after it move without a value instead of looking full; the stages are shown in
// the pipeline's order whatever order the status lists them in.
func TestDashboardBarsWaitForEarlierStages(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	status := `{"corpus":"demo","state":"indexing","detection":{},"stages":[` +
		`{"stage":"extractor","total":4,"done":4,"pending":0,"in_flight":0,"dead_lettered":0},` +
		`{"stage":"chunker","total":10,"done":4,"pending":5,"in_flight":1,"dead_lettered":0},` +
		`{"stage":"grapher","total":4,"done":4,"pending":0,"in_flight":0,"dead_lettered":0}]}`
	fake := `(() => { const real = window.fetch; window.fetch = (u, o) => String(u).endsWith('/status') ? ` +
		`Promise.resolve(new Response(` + strconv.Quote(status) + `, {status: 200, headers: {'Content-Type': 'application/json'}})) : real(u, o); ` +
		`location.hash = '#/dashboard'; return true; })()`
	b.run(t, "a dashboard of a corpus half chunked", chromedp.Navigate(s.base+"/ui/#/ask"),
		chromedp.WaitVisible(chromedp.CSS("#question")),
		eval(fake),
		waitJS(`!!document.querySelector('#stages tr[data-stage="grapher"] progress')`))
	bars := jsString(t, b, `[...document.querySelectorAll('#stages tr[data-stage]')].map(tr => tr.dataset.stage + '=' + (tr.querySelector('progress').hasAttribute('value') ? 'value' : 'waiting')).join(',')`)
	if want := "chunker=value,extractor=waiting,grapher=waiting"; bars != want {
		t.Errorf("bars %s, want %s", bars, want)
	}
}

// TestDashboardShowsRatesAndETA: each stage's row shows its rate over the last minute
// and the ETA of what it has left at that rate.
func TestDashboardShowsRatesAndETA(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	status := `{"corpus":"demo","state":"indexing","detection":{},"stages":[` +
		`{"stage":"chunker","total":10,"done":10,"pending":0,"in_flight":0,"dead_lettered":0,"rate":0.5},` +
		`{"stage":"extractor","total":300,"done":150,"pending":120,"in_flight":30,"dead_lettered":0,"rate":2.5,"eta_seconds":3725},` +
		`{"stage":"grapher","total":150,"done":0,"pending":150,"in_flight":0,"dead_lettered":0,"rate":0}]}`
	fake := `(() => { const real = window.fetch; window.fetch = (u, o) => String(u).endsWith('/status') ? ` +
		`Promise.resolve(new Response(` + strconv.Quote(status) + `, {status: 200, headers: {'Content-Type': 'application/json'}})) : real(u, o); ` +
		`location.hash = '#/dashboard'; return true; })()`
	b.run(t, "a dashboard of a corpus being extracted", chromedp.Navigate(s.base+"/ui/#/ask"),
		chromedp.WaitVisible(chromedp.CSS("#question")),
		eval(fake),
		waitJS(`!!document.querySelector('#stages tr[data-stage="grapher"] td.eta')`))
	rows := jsString(t, b, `[...document.querySelectorAll('#stages tr[data-stage]')].map(tr => tr.dataset.stage + '=' + tr.querySelector('td.rate').textContent + '/' + tr.querySelector('td.eta').textContent).join(',')`)
	if want := "chunker=0.50/–,extractor=2.50/1h 2m,grapher=–/?"; rows != want {
		t.Errorf("rates and ETAs %s, want %s", rows, want)
	}
}

// dropFiles drops files on the documents page's drop zone, as a drag and drop does.
func dropFiles(files map[string]string) chromedp.Action[chromedp.Void] {
	var js strings.Builder
	js.WriteString(`(() => { const dt = new DataTransfer();`)
	for name, body := range files {
		fmt.Fprintf(&js, `dt.items.add(new File([%q], %q, {type: 'text/markdown'}));`, body, name)
	}
	js.WriteString(`const z = document.querySelector('#dropzone');
		z.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
		z.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true})); return true; })()`)
	return eval(js.String())
}

func TestUploadedDocumentIsListedAndAnswerable(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	body := "# Orla Pennick\n\nOrla Pennick is the harbourmaster of Marrow Bay. Orla Pennick keeps the harbour ledger in the Weighbridge Office.\n"
	b.run(t, "uploading", chromedp.Navigate(s.base+"/ui/#/documents"),
		chromedp.WaitVisible(chromedp.CSS("#dropzone")),
		dropFiles(map[string]string{"orla_pennick.md": body}),
		waitJS(`[...document.querySelectorAll('#documents td.title')].some(td => td.textContent === 'Orla Pennick')`),
		waitJS(`[...document.querySelectorAll('#documents tr')].some(tr => tr.textContent.includes('Orla Pennick') && tr.textContent.includes('indexed'))`))
	b.screenshot(t, "documents")
	b.run(t, "asking about it", chromedp.Navigate(s.base+"/ui/#/ask"),
		chromedp.WaitVisible(chromedp.CSS("#question")),
		chromedp.SendKeys(chromedp.CSS("#question"), "Where does Orla Pennick keep the harbour ledger?"),
		chromedp.Click(chromedp.CSS("#ask")),
		waitJS(`document.querySelector('#answer').dataset.done === '1'`))
	if a := textOf(b, t, "#answer"); !strings.Contains(a, "Weighbridge Office") {
		t.Errorf("answer %q does not come from the uploaded document", a)
	}
}

// TestDocumentsFilterAndSort: the documents list is sorted by title, a click on a
// column header sorts by it (again: the other way), and the filter keeps the documents
// whose title or id holds it.
func TestDocumentsFilterAndSort(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	titles := `[...document.querySelectorAll('#documents td.title')].map(td => td.textContent.toLowerCase())`
	sorted := func(desc bool) string {
		return fmt.Sprintf(`(() => { const t = %s; return t.length > 1 && t.every((x, i) => i === 0 || (%v ? t[i - 1] >= x : t[i - 1] <= x)); })()`, titles, desc)
	}
	b.run(t, "listing", chromedp.Navigate(s.base+"/ui/#/documents"),
		waitJS(`document.querySelectorAll('#documents td.title').length >= 14`),
		waitJS(sorted(false)),
		chromedp.Click(chromedp.CSS(`#documents th[data-sort="title"] button`)),
		waitJS(`document.querySelector('#documents th[data-sort="title"]').getAttribute('aria-sort') === 'descending'`),
		waitJS(sorted(true)),
		chromedp.SendKeys(chromedp.CSS("#doc-filter"), "lighthouse"),
		waitJS(`/^\d+ of \d+ documents$/.test(document.querySelector('#doc-count').textContent)`))
	rows := jsString(t, b, `[...document.querySelectorAll('#documents tr[data-id]')].map(tr => tr.textContent.toLowerCase()).join('\n')`)
	if rows == "" {
		t.Fatal("the filter \"lighthouse\" kept no document")
	}
	for _, r := range strings.Split(rows, "\n") {
		if !strings.Contains(r, "lighthouse") {
			t.Errorf("row %q does not hold the filter", r)
		}
	}
}

func TestCorpusTextIsText(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 1280, 800)
	const evil = `<script>alert(1)</script>`
	body := "# " + evil + "\n\nThe Quayside Bellringer " + evil + ` rings <img src=x onerror=alert(2)> the Quayside Bell at dusk.` + "\n"
	b.run(t, "uploading a hostile document", chromedp.Navigate(s.base+"/ui/#/documents"),
		chromedp.WaitVisible(chromedp.CSS("#dropzone")),
		dropFiles(map[string]string{"hostile.md": body}),
		waitJS(`[...document.querySelectorAll('#documents tr')].some(tr => tr.textContent.includes('alert(1)') && tr.textContent.includes('indexed'))`))
	if got := jsString(t, b, `[...document.querySelectorAll('#documents td.title')].map(td => td.textContent).find(t => t.includes('alert')) || ''`); got != evil {
		t.Errorf("title cell text %q, want the literal %q", got, evil)
	}
	b.run(t, "reading its passage", chromedp.Navigate(s.base+"/ui/#/ask"),
		chromedp.WaitVisible(chromedp.CSS("#question")),
		chromedp.SendKeys(chromedp.CSS("#question"), "Who rings the Quayside Bell?"),
		chromedp.Click(chromedp.CSS("#ask")),
		waitJS(`document.querySelector('#answer').dataset.done === '1'`),
		chromedp.Click(chromedp.CSS("#answer a.cite")),
		waitJS(`!!document.querySelector('#passage .passage-text')`),
		chromedp.Sleep(500*time.Millisecond))
	if txt := textOf(b, t, "#passage .passage-text"); !strings.Contains(txt, evil) || !strings.Contains(txt, "<img src=x") {
		t.Errorf("passage text %q does not show the markup as text", txt)
	}
	if n := jsString(t, b, `String(document.querySelectorAll('main script, main img').length)`); n != "0" {
		t.Errorf("%s script or img elements were created from corpus text", n)
	}
	if d := b.dialogs.Load(); d != 0 {
		t.Errorf("%d JavaScript dialogs opened", d)
	}
	b.screenshot(t, "hostile-passage")
}

func TestTokenRequired(t *testing.T) {
	s := upStack(t, "-api-tokens", "ui-secret-token")
	b := newBrowser(t, 1280, 800)
	b.run(t, "opening without a token", chromedp.Navigate(s.base+"/ui/#/communities"),
		waitJS(`getComputedStyle(document.querySelector('#token-form')).display !== 'none' && !!document.querySelector('.auth-required')`))
	if n := jsString(t, b, `String(document.querySelectorAll('#tree a.community').length)`); n != "0" {
		t.Errorf("%s communities shown without a token", n)
	}
	b.screenshot(t, "token-prompt")
	b.run(t, "entering a wrong token", chromedp.SendKeys(chromedp.CSS("#token"), "wrong"),
		chromedp.Click(chromedp.CSS("#token-form button[type=submit]")),
		waitJS(`!document.querySelector('#token-form').hidden && document.querySelector('#token-form p').textContent.includes('refused')`))
	b.run(t, "entering the token", chromedp.SendKeys(chromedp.CSS("#token"), "ui-secret-token"),
		chromedp.Click(chromedp.CSS("#token-form button[type=submit]")),
		waitJS(`document.querySelectorAll('#tree a.community').length > 0`))
	if got := jsString(t, b, `sessionStorage.getItem('graphrag.token') || ''`); got != "ui-secret-token" {
		t.Errorf("session storage holds %q, want the token", got)
	}
	// Without -api-tokens there is no prompt.
	open := upStack(t)
	b2 := newBrowser(t, 1280, 800)
	b2.run(t, "opening without auth", chromedp.Navigate(open.base+"/ui/#/communities"),
		waitJS(`document.querySelectorAll('#tree a.community').length > 0`))
	if hidden := jsString(t, b2, `String(getComputedStyle(document.querySelector('#token-form')).display === 'none')`); hidden != "true" {
		t.Error("the token form shows although the API needs no token")
	}
}

func TestPhoneLayout(t *testing.T) {
	s := upStack(t)
	b := newBrowser(t, 390, 844)
	b.run(t, "explorer on a phone", chromedp.Navigate(s.base+"/ui/#/explore?entity=Gullhead%20Lighthouse&depth=1"),
		waitJS(`!!document.querySelector('#graph').dataset.renderMs`))
	if w := jsString(t, b, `String(document.documentElement.scrollWidth <= window.innerWidth + 1)`); w != "true" {
		t.Error("the explorer scrolls sideways on a phone")
	}
	b.screenshot(t, "phone-explore")
	b.run(t, "documents on a phone", chromedp.Navigate(s.base+"/ui/#/dashboard"),
		waitJS(`!!document.querySelector('#corpus-state')`))
	if w := jsString(t, b, `String(document.documentElement.scrollWidth <= window.innerWidth + 1)`); w != "true" {
		t.Error("the dashboard scrolls sideways on a phone")
	}
	b.screenshot(t, "phone-dashboard")
}
