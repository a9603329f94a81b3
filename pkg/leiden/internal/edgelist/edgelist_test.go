package edgelist

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/pkg/wgraph"
)

func sample(t *testing.T) *wgraph.Graph {
	t.Helper()
	g, err := wgraph.FromEdges(5, []wgraph.Edge{
		{U: 0, V: 1, W: 0.1}, {U: 1, V: 2, W: 1.0 / 3}, {U: 2, V: 2, W: 2.5}, {U: 3, V: 1, W: 1e-300}, {U: 0, V: 1, W: 7},
	}) // node 4 is isolated; the two 0-1 edges are summed
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// same compares two graphs entry by entry, weights bit for bit.
func same(t *testing.T, a, b *wgraph.Graph) {
	t.Helper()
	if a.N() != b.N() || a.EdgeCount() != b.EdgeCount() || a.TotalWeight() != b.TotalWeight() {
		t.Fatalf("graphs differ: n %d/%d, edges %d/%d, m %v/%v", a.N(), b.N(), a.EdgeCount(), b.EdgeCount(), a.TotalWeight(), b.TotalWeight())
	}
	for u := range a.N() {
		na, wa := a.Neighbors(u)
		nb, wb := b.Neighbors(u)
		if a.SelfLoop(u) != b.SelfLoop(u) || len(na) != len(nb) {
			t.Fatalf("node %d differs", u)
		}
		for k := range na {
			if na[k] != nb[k] || wa[k] != wb[k] {
				t.Fatalf("node %d entry %d: %d %v, want %d %v", u, k, nb[k], wb[k], na[k], wa[k])
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	g := sample(t)
	for _, name := range []string{"g.edges", "g.edges.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			if err := WriteFile(path, g); err != nil {
				t.Fatal(err)
			}
			back, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			same(t, g, back)
		})
	}
}

func TestFormat(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sample(t)); err != nil {
		t.Fatal(err)
	}
	want := "# nodes 5 edges 4\n0 1 7.1\n1 2 0.3333333333333333\n1 3 1e-300\n2 2 2.5\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestMalformed(t *testing.T) {
	for name, text := range map[string]string{
		"empty":        "",
		"no header":    "0 1 1\n",
		"two fields":   "# nodes 2 edges 1\n0 1\n",
		"bad weight":   "# nodes 2 edges 1\n0 1 x\n",
		"bad node":     "# nodes 2 edges 1\n0 y 1\n",
		"out of range": "# nodes 2 edges 1\n0 2 1\n",
		"negative":     "# nodes 2 edges 1\n0 1 -1\n",
		"bad counts":   "# nodes 2 edges -1\n0 1 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(text))
			if err == nil {
				t.Fatal("no error")
			}
			if name != "out of range" && name != "negative" && !errors.Is(err, ErrFormat) {
				t.Errorf("error %v, want ErrFormat", err)
			}
		})
	}
}

// FuzzRead checks that any input either fails cleanly or reads a graph that
// writes and reads back unchanged.
func FuzzRead(f *testing.F) {
	f.Add("# nodes 3 edges 2\n0 1 1\n1 2 0.5\n")
	f.Add("# nodes 1 edges 1\n0 0 3\n")
	f.Fuzz(func(t *testing.T, text string) {
		var n, m int
		if _, err := fmt.Sscanf(text, "# nodes %d edges %d", &n, &m); err == nil && n > 1000 {
			return // a valid header may ask for any number of nodes
		}
		g, err := Read(strings.NewReader(text))
		if err != nil || g.N() > 1000 {
			return
		}
		var b bytes.Buffer
		if err := Write(&b, g); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&b)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		same(t, g, back)
	})
}
