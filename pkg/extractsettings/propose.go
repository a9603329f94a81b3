package extractsettings

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/prompts"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// ChunkLister lists and reads chunk records (a vectorstore.Store).
type ChunkLister interface {
	ChunkReader
	List(ctx context.Context, coll, after string, limit int) (ids []string, next string, err error)
}

// Sample limits.
const (
	DefaultSample = 8
	MaxSample     = 30
	// samplePassageBytes bounds one passage of the sample.
	samplePassageBytes = 1500
)

// ErrNoChunks is the error of a sample of a corpus without an extractable chunk.
var ErrNoChunks = errkind.Public(errkind.NotFound, "the corpus has no extractable passage to sample: publish documents first")

// Sample returns the bodies of n extractable chunks of a corpus spread evenly over
// its chunk ids (the same n passages for the same corpus), each cut to 1,500 bytes.
func Sample(ctx context.Context, chunks ChunkLister, corpus string, n int) ([]string, error) {
	if n < 1 || n > MaxSample {
		return nil, fieldErr("sample", "%d is outside 1..%d", n, MaxSample)
	}
	coll := schema.Collection(corpus, schema.Chunks)
	var ids []string
	for after := ""; ; {
		page, next, err := chunks.List(ctx, coll, after, 4096)
		if errors.Is(err, vectorstore.ErrNotFound) {
			return nil, ErrNoChunks
		}
		if err != nil {
			return nil, fmt.Errorf("listing the chunks of %s: %w", corpus, err)
		}
		ids = append(ids, page...)
		if next == "" {
			break
		}
		after = next
	}
	// Read more than n (some are skipped), evenly spaced.
	want := min(len(ids), 3*n)
	pick := make([]string, 0, want)
	for i := range want {
		pick = append(pick, ids[i*len(ids)/want])
	}
	recs, err := chunks.Get(ctx, coll, pick)
	if err != nil {
		return nil, fmt.Errorf("reading the chunks of %s: %w", corpus, err)
	}
	// Every third record first (n spread over the corpus), then the others in place
	// of skipped ones.
	order := make([]int, 0, len(recs))
	for start := range 3 {
		for i := start; i < len(recs); i += 3 {
			order = append(order, i)
		}
	}
	var out []string
	for _, i := range order {
		if len(out) >= n {
			break
		}
		r := recs[i]
		if r.Attrs[schema.ChunkSkip] != "" {
			continue
		}
		_, body := schema.SplitChunkText(r.Attrs[schema.ChunkTitle], r.Attrs[schema.ChunkSection], r.Text)
		if strings.TrimSpace(body) == "" {
			continue
		}
		out = append(out, textseg.Clip(body, samplePassageBytes))
	}
	if len(out) == 0 {
		return nil, ErrNoChunks
	}
	return out, nil
}

// Proposal is what Propose returns: settings to review, edit and save.
type Proposal struct {
	Settings Settings `json:"settings"`
	// Passages is the number of passages the model was shown; Dropped says what of
	// its answer did not validate and was left out.
	Passages int      `json:"passages"`
	Model    string   `json:"model"`
	Dropped  []string `json:"dropped,omitempty"`
}

type proposed struct {
	Domain      string   `json:"domain"`
	EntityTypes []string `json:"entity_types"`
	Examples    []struct {
		Text   string `json:"text"`
		Output struct {
			Entities      []Entity `json:"entities"`
			Relationships []struct {
				Source      string  `json:"source"`
				Target      string  `json:"target"`
				Type        string  `json:"type"`
				Description string  `json:"description"`
				Strength    float64 `json:"strength"`
			} `json:"relationships"`
		} `json:"output"`
	} `json:"examples"`
}

// Propose asks the chat model for settings (domain, entity types, examples) from
// sample passages of a corpus. The answer is put in the settings' form (type names in
// upper case with underscores, lengths cut) and examples that still do not validate
// are dropped, each with the reason in Dropped; a proposal without any entity type is
// an error.
func Propose(ctx context.Context, chat *llm.Client, passages []string) (Proposal, error) {
	if chat == nil {
		return Proposal{}, errors.New("proposing extraction settings needs a chat model")
	}
	if len(passages) == 0 {
		return Proposal{}, ErrNoChunks
	}
	req := llm.ChatRequest{Stage: "prompt-tune", System: prompts.SettingsSystem, User: prompts.Settings(passages),
		Temperature: 0, MaxTokens: prompts.SettingsMaxTokens,
		JSONSchema: &llm.Schema{Name: prompts.SettingsSchemaName, Schema: prompts.SettingsSchema(), Strict: true}}
	ans, _, err := llm.ChatJSON[proposed](ctx, chat, req)
	if err != nil {
		return Proposal{}, fmt.Errorf("asking the model for settings: %w", err)
	}
	p := Proposal{Passages: len(passages), Model: chat.Config().ChatModel}
	s := &p.Settings
	s.Domain = textseg.Clip(strings.TrimSpace(ans.Domain), MaxDomainBytes)
	known := map[string]bool{}
	for _, t := range ans.EntityTypes {
		t = canonicalType(t)
		if t == "" || known[t] || len(s.EntityTypes) >= MaxTypes {
			continue
		}
		known[t] = true
		s.EntityTypes = append(s.EntityTypes, t)
	}
	if len(s.EntityTypes) == 0 {
		return p, errkind.Public(errkind.Unavailable, "the model proposed no entity type; try again with a larger -sample or another model")
	}
	for i, e := range ans.Examples {
		ex := Example{Text: textseg.Clip(strings.TrimSpace(e.Text), MaxExampleBytes)}
		for _, en := range e.Output.Entities {
			en.Type = canonicalType(en.Type)
			ex.Output.Entities = append(ex.Output.Entities, en)
		}
		for _, r := range e.Output.Relationships {
			ex.Output.Relationships = append(ex.Output.Relationships, Relationship{Source: r.Source, Target: r.Target,
				Type: canonicalType(r.Type), Description: r.Description, Strength: min(10, max(1, int(r.Strength+0.5)))})
		}
		if err := ex.validate(fmt.Sprintf("examples[%d]", i), known); err != nil {
			p.Dropped = append(p.Dropped, err.Error())
			continue
		}
		if len(s.Examples) < MaxExamples {
			s.Examples = append(s.Examples, ex)
		}
	}
	if err := s.Validate(); err != nil {
		return p, fmt.Errorf("the model's proposal: %w", err)
	}
	return p, nil
}

// canonicalType is t in upper case with underscores, "" when nothing of it is left.
func canonicalType(t string) string {
	s := strings.ToUpper(strings.Join(strings.FieldsFunc(t, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9')
	}), "_"))
	s = strings.TrimLeft(s, "0123456789_")
	if len(s) > MaxTypeBytes {
		s = s[:MaxTypeBytes]
	}
	return s
}
