package export

import (
	"bufio"
	"encoding/xml"
	"fmt"
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

// xmlOut writes XML and keeps the first error, which writeGraphML returns.
type xmlOut struct {
	w   *bufio.Writer
	err error
}

func (o *xmlOut) str(s string) {
	if o.err == nil {
		_, o.err = o.w.WriteString(s)
	}
}

// text writes s as XML character data or attribute value (quotes escaped too;
// characters XML cannot hold become U+FFFD).
func (o *xmlOut) text(s string) {
	if o.err == nil {
		o.err = xml.EscapeText(o.w, []byte(s))
	}
}

func (o *xmlOut) data(key, value string) {
	if value == "" {
		return
	}
	o.str(`<data key="` + key + `">`)
	o.text(value)
	o.str(`</data>`)
}

func writeGraphML(w *bufio.Writer, m *model) error {
	o := &xmlOut{w: w}
	o.str(xml.Header)
	o.str(`<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"` +
		` xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">` + "\n")
	for _, k := range graphmlKeys(m.levels) {
		o.str(fmt.Sprintf(`  <key id="%s" for="%s" attr.name="%s" attr.type="%s"/>`+"\n", k.id, k.domain, k.name, k.typ))
	}
	o.str(`  <graph id="` + m.corpus + `" edgedefault="directed">` + "\n")
	for _, e := range m.entities {
		o.str(`    <node id="`)
		o.text(e.Key)
		o.str(`">`)
		o.data("label", e.Name)
		o.data("type", e.Type)
		o.data("description", e.Description)
		o.data("pagerank", strconv.FormatFloat(e.PageRank, 'g', -1, 64))
		o.data("mentions", strconv.Itoa(e.MentionCount))
		o.data("degree", strconv.Itoa(e.Degree))
		o.data("chunk_ids", strings.Join(e.ChunkIDs, " "))
		for l, c := range e.Communities {
			if c != "" && l < m.levels {
				o.data("community_"+strconv.Itoa(l), c)
			}
		}
		o.str("</node>\n")
	}
	for _, r := range m.rels {
		o.str(`    <edge id="` + r.ID + `" source="`)
		o.text(r.SourceKey)
		o.str(`" target="`)
		o.text(r.TargetKey)
		o.str(`">`)
		o.data("e_label", r.Type)
		o.data("e_description", r.Description)
		o.data("e_weight", strconv.FormatFloat(r.Weight, 'g', -1, 64))
		o.data("e_chunk_ids", strings.Join(r.ChunkIDs, " "))
		o.str("</edge>\n")
	}
	o.str("  </graph>\n</graphml>\n")
	return o.err
}

func (w *graphmlWriter) chunks(cs []chunk) error { return w.jsonl.chunks(cs) }
func (w *graphmlWriter) close() error            { return w.jsonl.close() }
func (w *graphmlWriter) files() []string         { return w.jsonl.files() }
