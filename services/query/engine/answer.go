package engine

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/textseg"
)

// Query answers a question. onDelta, when not nil, receives the answer as it is
// generated (streamed from the LLM; offline, in one piece).
func (e *Engine) Query(ctx context.Context, req Request, onDelta func(string) error) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	t := newTimer()
	mode := req.Mode
	if mode == "" {
		mode = ModeAuto
	}
	var r *retrieval
	if mode != ModeGlobal {
		var err error
		if r, err = e.retrieve(ctx, req, t); err != nil {
			return nil, err
		}
	}
	if mode == ModeAuto {
		m, err := e.classify(ctx, req.Query, r.linked)
		if err != nil {
			return nil, err
		}
		mode = m
		t.mark("classify")
	}
	if mode == ModeGlobal {
		return e.global(ctx, req, t, onDelta)
	}
	resp := &Response{Mode: ModeLocal, Context: r.found}
	resp.Prompt = LocalPrompt(req.Query, r.found)
	rn := newRenumberer(len(r.found.Chunks))
	if e.deps.LLM != nil {
		ans, err := e.generate(ctx, llm.ChatRequest{Stage: "query", System: localSystem, User: resp.Prompt, MaxTokens: e.cfg.AnswerTokens}, rn, onDelta)
		if err != nil {
			return nil, fmt.Errorf("generating the answer: %w", err)
		}
		resp.Answer = ans
	} else {
		var err error
		if resp.Answer, err = cite(ExtractiveAnswer(req.Query, r.found), rn, onDelta); err != nil {
			return nil, err
		}
	}
	resp.Citations = chunkCitations(rn.order, r.found)
	t.mark("generate")
	resp.Timings = t.done()
	return resp, nil
}

// generate asks the model for an answer, its citation markers renumbered by rn, streamed
// to onDelta when it is set.
func (e *Engine) generate(ctx context.Context, req llm.ChatRequest, rn *renumberer, onDelta func(string) error) (string, error) {
	if onDelta == nil {
		cr, err := e.deps.LLM.Chat(ctx, req)
		if err != nil {
			return "", err
		}
		rn.write(cr.Content)
		rn.flush()
		return strings.TrimSpace(rn.text()), nil
	}
	_, err := e.deps.LLM.ChatStream(ctx, req, func(d string) error {
		if s := rn.write(d); s != "" {
			return onDelta(s)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if s := rn.flush(); s != "" {
		if err := onDelta(s); err != nil {
			return "", err
		}
	}
	return strings.TrimSpace(rn.text()), nil
}

// cite renumbers the markers of an answer written without a model and passes it to
// onDelta in one piece.
func cite(answer string, rn *renumberer, onDelta func(string) error) (string, error) {
	rn.write(answer)
	rn.flush()
	if onDelta != nil {
		if err := onDelta(rn.text()); err != nil {
			return "", err
		}
	}
	return rn.text(), nil
}

const localSystem = `You answer questions using only the context provided: themes from community reports, relationships from a knowledge graph, and numbered passages.
Cite the passages you use with their numbers in square brackets, like [1] or [2][3]. If the context does not contain the answer, say so. Be concise and specific.`

// LocalPrompt renders the generation prompt: themes (community reports), relationships,
// numbered passages, then the question.
func LocalPrompt(question string, c Retrieved) string {
	var b strings.Builder
	if len(c.Communities) > 0 {
		b.WriteString("## Themes\n")
		for _, cm := range c.Communities {
			fmt.Fprintf(&b, "- %s: %s\n", cm.Title, oneLine(cm.Summary, 600))
		}
		b.WriteString("\n")
	}
	if len(c.Relationships) > 0 {
		b.WriteString("## Relationships\n")
		for _, r := range c.Relationships {
			fmt.Fprintf(&b, "- %s --[%s]--> %s: %s\n", r.Source, r.Type, r.Target, oneLine(r.Description, 300))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Passages\n")
	for i, ch := range c.Chunks {
		fmt.Fprintf(&b, "[%d] (%s) %s\n\n", i+1, ch.ID, ch.Text)
	}
	b.WriteString("## Question\n")
	b.WriteString(question)
	b.WriteString("\n")
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// chunkCitations are the citations of a local answer: marker n cites the passage
// order[n-1] (1-based) of the context.
func chunkCitations(order []int, c Retrieved) []Citation {
	out := make([]Citation, 0, len(order))
	for i, n := range order {
		ch := c.Chunks[n-1]
		out = append(out, Citation{Marker: strconv.Itoa(i + 1), ChunkID: ch.ID, DocumentID: ch.DocumentID})
	}
	return out
}

func contentTerms(q string) map[string]float64 {
	out := map[string]float64{}
	for _, w := range queryWords(strings.ToLower(q)) {
		w = strings.Trim(w, ".'-")
		if len(w) < 2 || queryStop[w] {
			continue
		}
		// Longer words are usually rarer and more telling.
		out[lightStem(w)] = math.Log(1 + float64(len(w)))
	}
	return out
}

// overlap sums the weights of the terms s holds, each once, in s's word order.
func overlap(terms map[string]float64, s string) float64 {
	sc := 0.0
	for _, w := range distinctStems(s) {
		if v, ok := terms[w]; ok {
			sc += v
		}
	}
	return sc
}

// lightStem strips the commonest English inflections and derivations so that a
// question's "keeps" meets a passage's "keeper": crude, but the same on both sides.
func lightStem(w string) string {
	for _, suf := range []string{"ings", "ing", "ers", "er", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

// sentences splits with the project's one sentence segmenter.
func sentences(s string) []string {
	var out []string
	for _, sp := range textseg.Sentences(s) {
		if t := strings.TrimSpace(sp.Text(s)); len(t) > 3 {
			out = append(out, t)
		}
	}
	return out
}

func firstSentence(s string) string {
	ss := sentences(s)
	if len(ss) == 0 {
		return strings.TrimSpace(s)
	}
	return ss[0]
}
