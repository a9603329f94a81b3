//go:build browser

package console_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExplorerCurates selects two nodes in the explorer and merges them with the Merge
// button, then undoes the merge from the curation log, and checks through the API the
// console uses that the grapher applied both. It runs a stack of its own: the merge
// changes the demo graph the other tests read.
func TestExplorerCurates(t *testing.T) {
	s := upStack(t, "-detect-debounce", "250ms")
	b := newBrowser(t, 1280, 800)
	b.run(t, "merging two nodes", chromedp.Navigate(s.base+"/ui/#/explore?entity=Gullhead%20Lighthouse"),
		waitJS(`!!document.querySelector('#graph').dataset.renderMs`),
		eval(`(() => { const cy = window.graphrag.cy; cy.nodes().unselect(); cy.$id('samuel brede').select(); cy.$id('gullhead lighthouse').select(); })()`),
		waitJS(`!document.querySelector('#merge-nodes').disabled`),
		eval(`document.querySelector('#merge-nodes').click()`),
		waitJS(`document.querySelector('#curation-note').textContent.includes('accepted')`))
	log := func() string {
		return jsString(t, b, `fetch('/v1/corpora/demo/curation').then(r => r.json()).then(l => l.operations.map(o => o.action + ':' + o.state).join(','))`)
	}
	// The status of the entity route for name and, when it answers with the entity a
	// curation merged name into, the name it resolved from ("200:Samuel Brede").
	status := func(name string) string {
		return jsString(t, b, `fetch('/v1/corpora/demo/entities/'+encodeURIComponent('`+name+`')).then(async r => r.status + ':' + (r.ok ? ((await r.json()).resolved_from || '') : ''))`)
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !ok(); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after a minute (log %s)", what, log())
			}
		}
	}
	eventually("the merge applied", func() bool { return log() == "merge:active" && status("Samuel Brede") == "200:Samuel Brede" })
	b.run(t, "undoing from the log", eval(`document.querySelector('#curation').open = true`),
		waitJS(`!!document.querySelector('#curation-log button.undo')`),
		eval(`document.querySelector('#curation-log button.undo').click()`),
		waitJS(`document.querySelector('#curation-note').textContent.includes('Undo')`))
	eventually("the undo applied", func() bool {
		return log() == "merge:undone,undo:applied" && status("Samuel Brede") == "200:"
	})
	b.screenshot(t, "explore-curation")
}
