package edgelist

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/wgraph"
)

// ErrFormat reports a malformed edge list.
var ErrFormat = errors.New("edgelist: malformed edge list")

// Write writes g as an edge list: one line per undirected edge, loops as "u u w".
func Write(w io.Writer, g *wgraph.Graph) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "# nodes %d edges %d\n", g.N(), g.EdgeCount())
	var line []byte
	for u := range g.N() {
		if l := g.SelfLoop(u); l > 0 {
			line = appendEdge(line[:0], u, u, l)
			_, _ = bw.Write(line) // bufio keeps the first error; Flush returns it
		}
		nb, wt := g.Neighbors(u)
		for k, v := range nb {
			if int(v) > u {
				line = appendEdge(line[:0], u, int(v), wt[k])
				_, _ = bw.Write(line) // bufio keeps the first error; Flush returns it
			}
		}
	}
	return bw.Flush()
}

func appendEdge(b []byte, u, v int, w float64) []byte {
	b = strconv.AppendInt(b, int64(u), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(v), 10)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, w, 'g', -1, 64)
	return append(b, '\n')
}

// Read parses an edge list into a graph.
func Read(r io.Reader) (*wgraph.Graph, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("reading header: %w", errors.Join(ErrFormat, sc.Err()))
	}
	var n, m int
	if _, err := fmt.Sscanf(sc.Text(), "# nodes %d edges %d", &n, &m); err != nil {
		return nil, fmt.Errorf("parsing header %q: %w", sc.Text(), errors.Join(ErrFormat, err))
	}
	if n < 0 || m < 0 {
		return nil, fmt.Errorf("header %q: negative count: %w", sc.Text(), ErrFormat)
	}
	edges := make([]wgraph.Edge, 0, min(m, 1<<20)) // the header is only a hint
	for line := 2; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: %d fields: %w", line, len(f), ErrFormat)
		}
		u, err1 := strconv.Atoi(f[0])
		v, err2 := strconv.Atoi(f[1])
		w, err3 := strconv.ParseFloat(f[2], 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, errors.Join(ErrFormat, err))
		}
		edges = append(edges, wgraph.Edge{U: u, V: v, W: w})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading edges: %w", err)
	}
	g, err := wgraph.FromEdges(n, edges)
	if err != nil {
		return nil, fmt.Errorf("building graph: %w", err)
	}
	return g, nil
}

// WriteFile writes g to path, gzip-compressed when path ends in .gz.
func WriteFile(path string, g *wgraph.Graph) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating edge list: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	var w io.Writer = f
	if strings.HasSuffix(path, ".gz") {
		zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
		defer func() { err = errors.Join(err, zw.Close()) }()
		w = zw
	}
	if err := Write(w, g); err != nil {
		return fmt.Errorf("writing edge list %s: %w", path, err)
	}
	return nil
}

// ReadFile reads a graph from path, gunzipping when path ends in .gz.
func ReadFile(path string) (*wgraph.Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening edge list: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("opening gzip edge list %s: %w", path, err)
		}
		r = zr
	}
	g, err := Read(r)
	if err != nil {
		return nil, fmt.Errorf("reading edge list %s: %w", path, err)
	}
	return g, nil
}
