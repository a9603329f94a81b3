package export

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// GraphMLFile is the graph file of the graphml format.
const GraphMLFile = "graph.graphml"

// graphmlWriter writes the entity graph as GraphML and the communities and chunks as
// JSON Lines beside it.
type graphmlWriter struct {
	jsonl jsonlWriter
}

// graphmlKey declares one attribute. Gephi takes "label" as the node or edge label
// and "weight" as the edge weight.
type graphmlKey struct{ id, domain, name, typ string }

func graphmlKeys(levels int) []graphmlKey {
	keys := []graphmlKey{
		{"label", "node", "label", "string"},
		{"type", "node", "type", "string"},
		{"description", "node", "description", "string"},
		{"pagerank", "node", "pagerank", "double"},
		{"mentions", "node", "mentions", "int"},
		{"degree", "node", "degree", "int"},
		{"chunk_ids", "node", "chunk_ids", "string"},
	}
	for l := range levels {
		n := "community_" + strconv.Itoa(l)
		keys = append(keys, graphmlKey{n, "node", n, "string"})
	}
	return append(keys,
		graphmlKey{"e_label", "edge", "label", "string"},
		graphmlKey{"e_description", "edge", "description", "string"},
		graphmlKey{"e_weight", "edge", "weight", "double"},
		graphmlKey{"e_chunk_ids", "edge", "chunk_ids", "string"},
	)
}

func (w *graphmlWriter) graph(m *model) error {
	f, err := w.jsonl.sink.Create(GraphMLFile)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := writeGraphML(bw, m); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", GraphMLFile, err)
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", GraphMLFile, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", GraphMLFile, err)
	}
	w.jsonl.written = append(w.jsonl.written, GraphMLFile)
	return w.jsonl.communities(m)
}

func writeGraphML(w *bufio.Writer, m *model) error {
	w.WriteString(xml.Header)
	w.WriteString(`<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"` +
		` xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">` + "\n")
	for _, k := range graphmlKeys(m.levels) {
		fmt.Fprintf(w, `  <key id="%s" for="%s" attr.name="%s" attr.type="%s"/>`+"\n", k.id, k.domain, k.name, k.typ)
	}
	fmt.Fprintf(w, `  <graph id="%s" edgedefault="directed">`+"\n", m.corpus)
	for _, e := range m.entities {
		w.WriteString(`    <node id="`)
		escape(w, e.Key)
		w.WriteString(`">`)
		data(w, "label", e.Name)
		data(w, "type", e.Type)
		data(w, "description", e.Description)
		data(w, "pagerank", strconv.FormatFloat(e.PageRank, 'g', -1, 64))
		data(w, "mentions", strconv.Itoa(e.MentionCount))
		data(w, "degree", strconv.Itoa(e.Degree))
		data(w, "chunk_ids", strings.Join(e.ChunkIDs, " "))
		for l, c := range e.Communities {
			if c != "" && l < m.levels {
				data(w, "community_"+strconv.Itoa(l), c)
			}
		}
		w.WriteString("</node>\n")
	}
	for _, r := range m.rels {
		fmt.Fprintf(w, `    <edge id="%s" source="`, r.ID)
		escape(w, r.SourceKey)
		w.WriteString(`" target="`)
		escape(w, r.TargetKey)
		w.WriteString(`">`)
		data(w, "e_label", r.Type)
		data(w, "e_description", r.Description)
		data(w, "e_weight", strconv.FormatFloat(r.Weight, 'g', -1, 64))
		data(w, "e_chunk_ids", strings.Join(r.ChunkIDs, " "))
		w.WriteString("</edge>\n")
	}
	_, err := w.WriteString("  </graph>\n</graphml>\n")
	return err
}

func data(w *bufio.Writer, key, value string) {
	if value == "" {
		return
	}
	w.WriteString(`<data key="` + key + `">`)
	escape(w, value)
	w.WriteString(`</data>`)
}

// escape writes s as XML character data or attribute value (quotes escaped too;
// characters XML cannot hold become U+FFFD).
func escape(w io.Writer, s string) { _ = xml.EscapeText(w, []byte(s)) }

func (w *graphmlWriter) chunks(cs []chunk) error { return w.jsonl.chunks(cs) }
func (w *graphmlWriter) close() error            { return w.jsonl.close() }
func (w *graphmlWriter) files() []string         { return w.jsonl.files() }
