package engine

import (
	"context"
	"fmt"
	"math"
	"regexp"
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
	if e.deps.LLM != nil {
		ans, err := e.generate(ctx, llm.ChatRequest{Stage: "query", System: localSystem, User: resp.Prompt, MaxTokens: e.cfg.AnswerTokens}, onDelta)
		if err != nil {
			return nil, fmt.Errorf("generating the answer: %w", err)
		}
		resp.Answer = ans
	} else {
		resp.Answer = ExtractiveAnswer(req.Query, r.found)
		if onDelta != nil {
			if err := onDelta(resp.Answer); err != nil {
				return nil, err
			}
		}
	}
	resp.Citations = citations(resp.Answer, r.found)
	t.mark("generate")
	resp.Timings = t.done()
	return resp, nil
}

// generate asks the model for an answer, streamed to onDelta when it is set.
func (e *Engine) generate(ctx context.Context, req llm.ChatRequest, onDelta func(string) error) (string, error) {
	var cr llm.ChatResponse
	var err error
	if onDelta != nil {
		cr, err = e.deps.LLM.ChatStream(ctx, req, onDelta)
	} else {
		cr, err = e.deps.LLM.Chat(ctx, req)
	}
	return strings.TrimSpace(cr.Content), err
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

var markerRE = regexp.MustCompile(`\[(\d+)\]`)

func citations(answer string, c Retrieved) []Citation {
	seen := map[int]bool{}
	out := []Citation{}
	for _, m := range markerRE.FindAllStringSubmatch(answer, -1) {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(c.Chunks) || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, Citation{Marker: m[1], ChunkID: c.Chunks[n-1].ID, DocumentID: c.Chunks[n-1].DocumentID})
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

func overlap(terms map[string]float64, s string) float64 {
	seen := map[string]bool{}
	sc := 0.0
	for _, w := range queryWords(strings.ToLower(s)) {
		w = lightStem(strings.Trim(w, ".'-"))
		if v, ok := terms[w]; ok && !seen[w] {
			seen[w] = true
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
