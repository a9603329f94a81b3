//go:build browser

package console_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/services/query/ask"
	"github.com/graphrag/graphrag/services/query/console"
	"github.com/graphrag/graphrag/services/query/engine"
	"github.com/graphrag/graphrag/services/query/explore"
	"github.com/graphrag/graphrag/services/query/httpapi"
	"github.com/graphrag/graphrag/services/query/internal/querytest"
)

// benchGraph writes 2,201 entities around "hub": 220 entities one hop away, each with 9
// of its own two hops away, plus a ring among the first hop so that there are more edges
// than a tree; 220 level-0 communities (one per branch) under 10 level-1 ones.
func benchGraph(b *testing.B) querytest.Stores {
	b.Helper()
	st := querytest.Open(b)
	var batch []graphstore.ChunkExtraction
	var comms []graphstore.Community
	pr := map[string]float64{"hub": 0.05}
	top := map[int][]string{}
	for i := range 220 {
		mid := fmt.Sprintf("branch %03d", i)
		ex := graphstore.ChunkExtraction{ChunkID: fmt.Sprintf("c%03d", i), DocumentID: "d",
			Entities: []graphstore.EntityMention{{Key: "hub", Name: "Hub", Type: "PLACE"}, {Key: mid, Name: mid, Type: "ORGANIZATION"}},
			Relations: []graphstore.RelationMention{{SourceKey: "hub", TargetKey: mid, Type: "HAS"},
				{SourceKey: mid, TargetKey: fmt.Sprintf("branch %03d", (i+1)%220), Type: "NEXT_TO"}}}
		members := []string{mid}
		pr[mid] = 0.002
		for j := range 9 {
			leaf := fmt.Sprintf("leaf %03d %d", i, j)
			ex.Entities = append(ex.Entities, graphstore.EntityMention{Key: leaf, Name: leaf, Type: "PERSON"})
			ex.Relations = append(ex.Relations, graphstore.RelationMention{SourceKey: mid, TargetKey: leaf, Type: "EMPLOYS"})
			members = append(members, leaf)
			pr[leaf] = 0.0001 * float64(j+1)
		}
		if i == 0 {
			ex.Entities = append(ex.Entities, graphstore.EntityMention{Key: "branch 219", Name: "branch 219", Type: "ORGANIZATION"})
		}
		batch = append(batch, ex)
		id := fmt.Sprintf("c0-%03d", i)
		comms = append(comms, graphstore.Community{ID: id, Level: 0, ParentID: fmt.Sprintf("c1-%d", i%10), Members: members})
		top[i%10] = append(top[i%10], members...)
	}
	for k, members := range top {
		if k == 0 {
			members = append(members, "hub")
		}
		comms = append(comms, graphstore.Community{ID: fmt.Sprintf("c1-%d", k), Level: 1, Members: members})
	}
	ctx := b.Context()
	if err := st.Graph.Merge(ctx, "demo", batch); err != nil {
		b.Fatal(err)
	}
	if err := st.Graph.SetPageRank(ctx, "demo", pr); err != nil {
		b.Fatal(err)
	}
	if err := st.Graph.ReplaceCommunities(ctx, "demo", comms); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkExplorerFirstRender2000 measures, in headless Chromium, the time from the
// explorer's request for a 2,000-node neighbourhood to the first frame drawn after
// its layout (the page's own performance.now() clock), over the real API and stores.
func BenchmarkExplorerFirstRender2000(b *testing.B) {
	st := benchGraph(b)
	e, err := ask.New(engine.Config{}, ask.Config{}, engine.Deps{Graph: st.Graph, Vectors: st.Vectors, Embedder: st.Embedder, Logger: querytest.Logger()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	api, err := httpapi.New(e, explore.New(st.Graph, st.Vectors), httpapi.DefaultConfig(), querytest.Logger())
	if err != nil {
		b.Fatal(err)
	}
	api.Mount(mux)
	console.Mount(mux)
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	tab := newBrowser(b, 1280, 800)
	br := tab.ctx
	// 1,999 neighbours and the hub: 2,000 nodes. The page loads once; each iteration
	// opens the neighbourhood again through the explorer's route (a fresh graph, as a
	// search does), so no navigation races the measurement.
	page := srv.URL + "/ui/#/explore?entity=hub&depth=2&limit=1999"
	rendered := waitJS(`!!document.querySelector('#graph') && !!document.querySelector('#graph').dataset.renderMs`)
	if err := chromedp.Do(br, chromedp.Navigate(page), rendered); err != nil {
		b.Fatal(err)
	}
	var total, fetch, labels float64
	nodes := ""
	b.ResetTimer()
	for i := range b.N {
		if err := chromedp.Do(br, eval(fmt.Sprintf(`delete document.querySelector('#graph').dataset.renderMs;
			location.hash = '#/explore?entity=hub&depth=2&limit=1999&run=%d'`, i)), rendered); err != nil {
			st, _ := chromedp.Run(br, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
			b.Fatalf("%v: %.500s", err, st)
		}
		ms, err := chromedp.Run(br, chromedp.Evaluate[string](`['renderMs', 'fetchMs', 'labelMs', 'nodes'].map(k => document.querySelector('#graph').dataset[k]).join(' ')`))
		if err != nil {
			b.Fatal(err)
		}
		var r, f, l float64
		if _, err := fmt.Sscanf(ms, "%f %f %f %s", &r, &f, &l, &nodes); err != nil {
			b.Fatalf("reading %q: %v", ms, err)
		}
		total += r
		fetch += f
		labels += l
	}
	b.StopTimer()
	if n, _ := strconv.Atoi(nodes); n != 2000 {
		b.Fatalf("drew %s nodes, want 2000", nodes)
	}
	tab.screenshot(b, "explore-2000")
	b.ReportMetric(total/float64(b.N), "ms/first-render")
	b.ReportMetric(fetch/float64(b.N), "ms/fetch")
	b.ReportMetric(labels/float64(b.N), "ms/labels") // placing the labels, within the first render
}
