package summarizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/llm"
	"github.com/graphrag/graphrag/pkg/prompts"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// embedText is what is embedded for rep under the configuration: its Text with
// Config.ReportEmbed ReportEmbedFull, else its SummaryText, the parts the query service
// shows and matches the question's words against (the findings are about half of a
// report); with ReportEmbedNone the offline embedder embeds it.
func (s *Service) embedText(rep schema.Report) string {
	if s.cfg.ReportEmbed == ReportEmbedFull {
		return rep.Text()
	}
	return rep.SummaryText()
}

// embedTextOf is what is embedded for a written report record under the configuration:
// its Text with ReportEmbedFull, else the SummaryText of the report it holds (its Text
// when that cannot be read).
func (s *Service) embedTextOf(rec vectorstore.Record) string {
	if s.cfg.ReportEmbed == ReportEmbedFull {
		return rec.Text
	}
	var rep schema.Report
	if err := json.Unmarshal([]byte(rec.Attrs[schema.ReportJSON]), &rep); err != nil || rep.Title == "" {
		return rec.Text
	}
	return rep.SummaryText()
}

// CommunityContext is what a report is written from.
type CommunityContext struct {
	Community     graphstore.Community
	Members       []graphstore.Entity       // by PageRank, descending
	Relationships []graphstore.Relationship // internal, by weight, descending
	SubReports    []schema.Report           // reports of the sub-communities (higher levels)
	Prompt        string                    // the context rendered within the token budget
}

// Context gathers the community context and renders it within the token budget:
// sub-community reports first for higher levels (they condense the most), then members by
// PageRank, then relationships by weight.
func (s *Service) Context(ctx context.Context, corpus string, com graphstore.Community) (CommunityContext, error) {
	subs, err := s.subReports(ctx, corpus, com)
	if err != nil {
		return CommunityContext{Community: com}, err
	}
	return s.contextWith(ctx, corpus, com, subs)
}

// subReports reads the reports written so far of com's sub-communities, by rating.
func (s *Service) subReports(ctx context.Context, corpus string, com graphstore.Community) ([]schema.Report, error) {
	if len(com.ChildIDs) == 0 {
		return nil, nil
	}
	recs, err := s.deps.Vectors.Get(ctx, schema.Collection(corpus, schema.Communities), com.ChildIDs)
	if errors.Is(err, vectorstore.ErrNotFound) {
		recs, err = nil, nil // no report written yet in this corpus
	}
	if err != nil {
		return nil, fmt.Errorf("reading sub-community reports of %s: %w", com.ID, err)
	}
	var subs []schema.Report
	for _, r := range recs {
		var rep schema.Report
		if json.Unmarshal([]byte(r.Attrs[schema.ReportJSON]), &rep) == nil {
			subs = append(subs, rep)
		}
	}
	sort.SliceStable(subs, func(i, j int) bool { return subs[i].Rating > subs[j].Rating })
	return subs, nil
}

// contextWith reads com's members and internal relationships and renders them with the
// sub-community reports subs.
func (s *Service) contextWith(ctx context.Context, corpus string, com graphstore.Community, subs []schema.Report) (CommunityContext, error) {
	cc := CommunityContext{Community: com, SubReports: subs}
	ents, err := s.deps.Graph.Entities(ctx, corpus, com.Members, graphstore.Brief) // no lists: the prompt uses none
	if err != nil {
		return cc, fmt.Errorf("reading members of %s: %w", com.ID, err)
	}
	sort.SliceStable(ents, func(i, j int) bool {
		if ents[i].PageRank != ents[j].PageRank {
			return ents[i].PageRank > ents[j].PageRank
		}
		return ents[i].Key < ents[j].Key
	})
	cc.Members = ents
	rels, err := s.deps.Graph.RelationshipsAmong(ctx, corpus, com.Members, graphstore.Brief)
	if err != nil {
		return cc, fmt.Errorf("reading relationships of %s: %w", com.ID, err)
	}
	sort.SliceStable(rels, func(i, j int) bool { return rels[i].Weight > rels[j].Weight })
	cc.Relationships = rels
	cc.Prompt = render(cc, s.cfg.ContextTokens)
	return cc, nil
}

// approxTokens estimates BPE tokens (about four characters each in English).
func approxTokens(s string) int { return len(s)/4 + 1 }

func render(cc CommunityContext, budget int) string {
	var b strings.Builder
	used := 0
	add := func(line string) bool {
		t := approxTokens(line)
		if used+t > budget {
			return false
		}
		used += t
		b.WriteString(line)
		b.WriteByte('\n')
		return true
	}
	if len(cc.SubReports) > 0 {
		add("## Sub-community reports")
		for _, r := range cc.SubReports {
			if !add("- " + r.Title + ": " + r.Summary) {
				break
			}
		}
	}
	add("## Entities")
	for _, e := range cc.Members {
		if !add(fmt.Sprintf("- %s (%s) [PR:%.4f] - %s", e.Name, e.Type, e.PageRank, e.Description)) {
			break
		}
	}
	add("## Relationships")
	names := map[string]string{}
	for _, e := range cc.Members {
		names[e.Key] = e.Name
	}
	for _, r := range cc.Relationships {
		if !add(fmt.Sprintf("- %s --[%s]--> %s: %s", nameOf(names, r.SourceKey), r.Type, nameOf(names, r.TargetKey), r.Description)) {
			break
		}
	}
	return b.String()
}

func nameOf(names map[string]string, key string) string {
	if n, ok := names[key]; ok {
		return n
	}
	return key
}

// reportSchema and reportSystem are package prompts', where package costestimate renders
// them too.
var reportSchema = prompts.ReportSchema()

const reportSystem = prompts.ReportSystem

func (s *Service) llmReport(ctx context.Context, cc CommunityContext) (schema.Report, error) {
	rep, _, err := llm.ChatJSON[schema.Report](ctx, s.deps.LLM, llm.ChatRequest{
		Stage: "summarizer", System: reportSystem, User: cc.Prompt, Temperature: 0, MaxTokens: prompts.ReportMaxTokens,
		JSONSchema: &llm.Schema{Name: prompts.ReportSchemaName, Schema: reportSchema, Strict: true},
	})
	if err != nil {
		return rep, err
	}
	rep.Rating = math.Max(0, math.Min(10, rep.Rating))
	return rep, nil
}

// Extractive builds a report without a model, from the same context: the title names the
// most central member and the member it is most strongly related to, the summary is
// built from the most central members' descriptions (first sentences) and the titles of
// the sub-communities, findings are the strongest internal relationships (their ends by
// name) with their evidence, and the rating grows with the community's size and internal density
// (documented in docs/adr/0005-offline-defaults.md).
func Extractive(cc CommunityContext) schema.Report {
	top := cc.Members
	if len(top) > 3 {
		top = top[:3]
	}
	var names []string
	for _, e := range top {
		names = append(names, e.Name)
	}
	rep := schema.Report{Title: extractiveTitle(cc)}
	var sum []string
	sum = append(sum, fmt.Sprintf("This community of %d entities centers on %s.", len(cc.Members), joinAnd(names)))
	for _, e := range cc.Members {
		if len(sum) >= 6 {
			break
		}
		if d := firstSentence(e.Description); d != "" {
			sum = append(sum, d)
		}
	}
	// Sub-community titles hold "and" and commas, so they are separated by semicolons.
	var subs []string
	for _, r := range cc.SubReports {
		if len(subs) == 3 {
			break
		}
		if r.Title != "" && !slices.Contains(subs, r.Title) {
			subs = append(subs, r.Title)
		}
	}
	if len(subs) > 0 {
		sum = append(sum, "It brings together "+plural(len(subs), "smaller community", "smaller communities")+": "+strings.Join(subs, "; ")+".")
	}
	rep.Summary = strings.Join(dedupe(sum), " ")
	nameByKey := map[string]string{}
	for _, e := range cc.Members {
		nameByKey[e.Key] = e.Name
	}
	seen := map[string]bool{}
	for _, r := range cc.Relationships {
		if len(rep.Findings) >= 5 {
			break
		}
		d := firstSentence(r.Description)
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		rep.Findings = append(rep.Findings, schema.Finding{Summary: nameOf(nameByKey, r.SourceKey) + " — " + nameOf(nameByKey, r.TargetKey), Explanation: d})
	}
	n := float64(len(cc.Members))
	density := 0.0
	if n > 1 {
		density = float64(len(cc.Relationships)) / (n * (n - 1) / 2)
	}
	rep.Rating = math.Round(math.Min(10, 2*math.Log2(1+n)+4*density)*10) / 10
	rep.RatingExplanation = fmt.Sprintf("%d members, %d internal relationships (density %.2f).", len(cc.Members), len(cc.Relationships), density)
	return rep
}

// maxTitle bounds an extractive title, in characters: longer, it names the lead alone.
const maxTitle = 64

// extractiveTitle names a community as a person would from its graph: its most central
// member and the member that member is most strongly related to inside the community
// ("Storm Hester and Kittiwake", "Mayor Dunmore and the Town Council with Harbour
// Street"), not a list of names. A partner whose name holds the
// lead's or is held in it ("Storm Hester", "The Storm Hester Inquiry") adds nothing and
// is passed over; without a relationship to the lead, the next most central member is
// the partner; a community of one member, or a pair too long to read at a glance, is
// named by its lead.
func extractiveTitle(cc CommunityContext) string {
	if len(cc.Members) == 0 {
		return "Empty community"
	}
	lead := cc.Members[0]
	distinct := func(e graphstore.Entity) bool {
		a, b := strings.ToLower(e.Name), strings.ToLower(lead.Name)
		return e.Key != lead.Key && !strings.Contains(a, b) && !strings.Contains(b, a)
	}
	weight := map[string]float64{}
	for _, r := range cc.Relationships {
		switch lead.Key {
		case r.SourceKey:
			weight[r.TargetKey] += r.Weight
		case r.TargetKey:
			weight[r.SourceKey] += r.Weight
		}
	}
	var partner *graphstore.Entity
	best := 0.0
	for _, e := range cc.Members { // by PageRank: a tie goes to the more central
		if w := weight[e.Key]; w > best && distinct(e) {
			partner, best = &e, w
		}
	}
	if partner == nil {
		for _, e := range cc.Members {
			if distinct(e) {
				partner = &e
				break
			}
		}
	}
	if partner == nil {
		return lead.Name
	}
	// "and" between two names that hold one reads as a list of three: "with" then.
	join := " and "
	if strings.Contains(lead.Name, " and ") || strings.Contains(partner.Name, " and ") {
		join = " with "
	}
	if t := lead.Name + join + partner.Name; utf8.RuneCountInString(t) <= maxTitle {
		return t
	}
	return lead.Name
}

// plural writes n with the singular or plural noun ("1 smaller community").
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return "nothing"
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if spans := textseg.Sentences(s); len(spans) > 0 {
		return textseg.Clip(spans[0].Text(s), 300)
	}
	return textseg.Clip(s, 300)
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
