package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/schema"
	"github.com/graphrag/graphrag/pkg/textseg"
	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// maxSubjectChunks bounds the chunks read to find the passages about the candidate
// entities: a hub's own document may be missed, which costs little (a hub says little
// about the question).
const (
	maxSubjectChunksPerEntity = 128
	maxSubjectChunks          = 4000
)

// prefixHopDiscount scales a hop through a shorter name that starts the mentioned one
// ("Sulli" for "Sulli Choi"): likely the same entity, not surely.
const prefixHopDiscount = 0.5

// reverseHopDiscount scales a hop to a passage that mentions the bridge entity rather
// than being about it.
const reverseHopDiscount = 0.5

// subjectList is the second hop of a multi-hop question made explicit, over the
// passage → subject relation: a passage's subject is the entity its document is about
// (offlinextract.Subject: its title when the title names one, else the subject its
// text opens with, with the aliases the text gives).
//
// The list holds
//  1. the passages about the entities the question names (linked entities), best link
//     first (tier 0: the first hop when the question names it);
//  2. the passages about the entities that first-hop passages mention (tier 1): a
//     first-hop passage is one of tier 0 or one of the best dense/lexical passages.
//
// Tier 1 is ordered by the evidence for each hop: a first-hop passage of rank r adds
// (1 + f)/r to every passage about an entity it mentions, where f counts the
// question's words in the passage's sentences that name that entity (the question
// matched against the fact that links the two passages, as HippoRAG 2 matches it
// against triples). "Who directed the film shot in Leland, North Carolina in 1986?":
// the best passage, about Leland, says the 1986 film Maximum Overdrive was shot there;
// the passage about Maximum Overdrive names the director but shares almost no words
// with the question, so only this hop finds it. A passage about a name that starts the
// mentioned one ("Sulli" for "Sulli Choi", "Leland" for "Leland, North Carolina") counts
// at prefixHopDiscount.
func (e *Engine) subjectList(ctx context.Context, corpus, query string, linked []linkedEntity, passages []passageSeed, lexical []vectorstore.Hit) (graphResult, error) {
	res := graphResult{paths: map[string][]string{}}
	h := &hop{e: e, corpus: corpus, recs: map[string]vectorstore.Record{}, lexRank: map[string]int{}}
	for i, hit := range lexical {
		h.recs[hit.ID] = hit.Record
		h.lexRank[hit.ID] = i + 1
	}

	// Tier 0: the passages about the linked entities.
	var linkedKeys []string
	for _, l := range linked {
		if !slices.Contains(linkedKeys, l.key) {
			linkedKeys = append(linkedKeys, l.key)
		}
	}
	about, err := h.passagesAbout(ctx, linkedKeys)
	if err != nil {
		return res, err
	}
	// Round by round: the best passage about each linked entity, then the second
	// best of each, … A long document about one of them must not fill the list
	// before the passages about the others and before the second hop (a multi-chunk
	// document's chunks all share its subject).
	var tier0 []string
	firstRound := 0
	for round := 0; ; round++ {
		added := false
		for _, k := range linkedKeys {
			if round >= len(about[k]) {
				continue
			}
			added = true
			if c := about[k][round]; res.paths[c] == nil {
				res.paths[c] = []string{k}
				tier0 = append(tier0, c)
			}
		}
		if !added {
			break
		}
		if round == 0 {
			firstRound = len(tier0)
		}
	}

	// First-hop passages: the best tier-0 passages, then the best dense/lexical ones.
	var first []passageSeed
	for _, c := range tier0 {
		if len(first) >= e.cfg.SubjectPassages {
			break
		}
		first = append(first, passageSeed{id: c})
	}
	for _, p := range passages {
		if !slices.ContainsFunc(first, func(s passageSeed) bool { return s.id == p.id }) {
			first = append(first, passageSeed{id: p.id})
		}
	}
	for i := range first {
		first[i].weight = 1 / float64(i+1)
	}
	cands, err := h.secondHop(ctx, query, first)
	if err != nil {
		return res, err
	}

	// The list: the best passage about each linked entity, the second hops, then the
	// linked entities' other passages.
	add := func(id string) {
		res.ids = append(res.ids, id)
		res.scores = append(res.scores, 1/float64(len(res.ids)))
	}
	for _, c := range tier0[:firstRound] {
		add(c)
	}
	for _, x := range cands {
		if _, ok := res.paths[x.id]; ok {
			continue
		}
		res.paths[x.id] = x.path
		add(x.id)
	}
	for _, c := range tier0[firstRound:] {
		add(c)
	}
	return res, nil
}

// hop reads what the subject list needs: chunk records (their subjects and texts),
// cached for one question.
type hop struct {
	e       *Engine
	corpus  string
	recs    map[string]vectorstore.Record
	lexRank map[string]int
	sents   map[string][]string // normalizedSentences of recs, computed once
}

// sentences returns the normalized sentences of the cached record id.
func (h *hop) sentences(id string) []string {
	if s, ok := h.sents[id]; ok {
		return s
	}
	if h.sents == nil {
		h.sents = map[string][]string{}
	}
	s := normalizedSentences(h.recs[id].Text)
	h.sents[id] = s
	return s
}

// records makes sure the records of ids are cached (at most maxSubjectChunks read).
func (h *hop) records(ctx context.Context, ids []string) error {
	var missing []string
	asked := map[string]bool{}
	for _, id := range ids {
		if _, ok := h.recs[id]; !ok && !asked[id] && len(missing) < maxSubjectChunks {
			asked[id] = true
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	got, err := h.e.deps.Vectors.Get(ctx, schema.Collection(h.corpus, schema.Chunks), missing)
	if err != nil {
		return fmt.Errorf("reading %d candidate passages: %w", len(missing), err)
	}
	for _, r := range got {
		h.recs[r.ID] = r
	}
	return nil
}

// passagesAbout returns, per entity key, the passages whose subject it is, best
// lexical rank first.
func (h *hop) passagesAbout(ctx context.Context, keys []string) (map[string][]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ents, err := h.e.deps.Graph.Entities(ctx, h.corpus, keys)
	if err != nil {
		return nil, fmt.Errorf("reading candidate subjects: %w", err)
	}
	var ids []string
	for _, en := range ents {
		ids = append(ids, firstN(en.ChunkIDs, maxSubjectChunksPerEntity)...)
	}
	if err := h.records(ctx, ids); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, en := range ents {
		for _, c := range firstN(en.ChunkIDs, maxSubjectChunksPerEntity) {
			if r, ok := h.recs[c]; ok && slices.Contains(subjectKeys(r), en.Key) {
				out[en.Key] = append(out[en.Key], c)
			}
		}
		sort.SliceStable(out[en.Key], func(i, j int) bool { return h.better(out[en.Key][i], out[en.Key][j]) })
	}
	return out, nil
}

// better orders passages by lexical rank (ranked ones first), then id.
func (h *hop) better(a, b string) bool {
	ra, rb := h.lexRank[a], h.lexRank[b]
	if (ra > 0) != (rb > 0) {
		return ra > 0
	}
	if ra != rb {
		return ra < rb
	}
	return a < b
}

type hopCandidate struct {
	id    string
	score float64
	path  []string
}

// secondHop scores the passages about the entities the first-hop passages mention.
func (h *hop) secondHop(ctx context.Context, query string, first []passageSeed) ([]hopCandidate, error) {
	if len(first) == 0 {
		return nil, nil
	}
	ids := make([]string, len(first))
	for i, p := range first {
		ids[i] = p.id
	}
	mentions, err := h.e.deps.Graph.ChunkEntities(ctx, h.corpus, ids)
	if err != nil {
		return nil, fmt.Errorf("reading the entities of the best passages: %w", err)
	}
	if err := h.records(ctx, ids); err != nil {
		return nil, err
	}
	var keys []string
	for _, id := range ids {
		for _, k := range mentions[id] {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	prefixes, all := namePrefixes(keys)
	about, err := h.passagesAbout(ctx, all)
	if err != nil {
		return nil, err
	}
	terms := questionTerms(query)
	cands := map[string]*hopCandidate{}
	for _, p := range first {
		h.scoreHops(cands, terms, p, mentions[p.id], about, prefixes)
	}
	out := sortedHops(h, cands)
	seen := map[string]bool{}
	for _, x := range out {
		seen[x.id] = true
	}
	// Reverse and mention hops come after every forward hop: weaker evidence (a passage
	// that mentions an entity says less about it than one about it).
	if h.e.cfg.ReverseHops {
		rev := map[string]*hopCandidate{}
		if err := h.reverseHops(ctx, rev, terms, first); err != nil {
			return nil, err
		}
		out = appendUnseen(out, sortedHops(h, rev), seen)
	}
	if h.e.cfg.MentionHops {
		men := map[string]*hopCandidate{}
		if err := h.mentionHops(ctx, men, terms, first, mentions); err != nil {
			return nil, err
		}
		out = appendUnseen(out, sortedHops(h, men), seen)
	}
	return out, nil
}

// appendUnseen appends to out the hops of more that seen lacks, and marks them seen.
func appendUnseen(out, more []hopCandidate, seen map[string]bool) []hopCandidate {
	for _, x := range more {
		if !seen[x.id] {
			seen[x.id] = true
			out = append(out, x)
		}
	}
	return out
}

// sortedHops returns cands best score first, ties by lexical rank.
func sortedHops(h *hop, cands map[string]*hopCandidate) []hopCandidate {
	out := make([]hopCandidate, 0, len(cands))
	for _, x := range cands {
		out = append(out, *x)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return h.better(out[i].id, out[j].id)
	})
	return out
}

// namePrefixes returns, per key, the names that start it: a name that starts another
// ("Sulli" in "Sulli Choi", "Leland" in "Leland, North Carolina") may be the subject of
// the passage about it. all is keys followed by every new prefix.
func namePrefixes(keys []string) (prefixes map[string][]string, all []string) {
	prefixes = map[string][]string{}
	all = append(all, keys...)
	for _, k := range keys {
		w := strings.Fields(k)
		for n := len(w) - 1; n >= 1; n-- {
			p := strings.Join(w[:n], " ")
			if len([]rune(p)) >= 3 && !queryStop[p] {
				prefixes[k] = append(prefixes[k], p)
				if !slices.Contains(all, p) {
					all = append(all, p)
				}
			}
		}
	}
	return prefixes, all
}

// scoreHops adds to cands the hops from the first-hop passage p through each entity it
// mentions to the passages about that entity (and, discounted, about its prefixes).
func (h *hop) scoreHops(cands map[string]*hopCandidate, terms []string, p passageSeed, mentioned []string, about, prefixes map[string][]string) {
	rec := h.recs[p.id]
	own := subjectKeys(rec)
	sents := h.sentences(p.id)
	for _, k := range mentioned {
		if slices.Contains(own, k) {
			continue
		}
		gain := p.weight * (1 + factMatch(terms, sents, k, own))
		add := func(c string, g float64) {
			if c == p.id {
				return
			}
			x := cands[c]
			if x == nil {
				x = &hopCandidate{id: c, path: []string{own[0], k}}
				cands[c] = x
			}
			x.score += g
		}
		// The j-th best passage about k counts 1/j: a long document's chunks all
		// share its subject, and the hop is to the one that matches best.
		for j, c := range about[k] {
			add(c, gain/float64(j+1))
		}
		for _, pk := range prefixes[k] {
			if slices.Contains(own, pk) {
				continue
			}
			for j, c := range about[pk] {
				add(c, gain*prefixHopDiscount/float64(j+1))
			}
		}
	}
}

// reverseHops adds to cands the passages that mention the subject of a first-hop
// passage without being about it: the bridge seen from the other side ("Hannah Gross
// ... the daughter of Paul Gross" for a question that reaches the passage about Paul
// Gross). Each counts like a forward hop, its fact matched in the mentioning passage's
// sentences, at reverseHopDiscount: a passage that mentions an entity says less about
// it than one about it, and a well-known entity is mentioned by many.
func (h *hop) reverseHops(ctx context.Context, cands map[string]*hopCandidate, terms []string, first []passageSeed) error {
	var keys []string
	for _, p := range first {
		for _, k := range subjectKeys(h.recs[p.id]) {
			if k != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	ents, err := h.e.deps.Graph.Entities(ctx, h.corpus, keys)
	if err != nil {
		return fmt.Errorf("reading the subjects of the best passages: %w", err)
	}
	mentionedBy, err := h.mentioning(ctx, ents)
	if err != nil {
		return err
	}
	for _, p := range first {
		own := subjectKeys(h.recs[p.id])
		open := unexplained(terms, h.recs[p.id].Text)
		if len(open) == 0 {
			continue // the first hop explains the whole question
		}
		for _, k := range own {
			if best, fm := h.bestMention(p.id, k, mentionedBy[k], open); best != "" {
				h.addHop(cands, best, []string{own[0], subjectKeys(h.recs[best])[0]}, p.weight*(1+fm)*reverseHopDiscount)
			}
		}
	}
	return nil
}

// mentionHops adds to cands, for each entity a first-hop passage mentions (not its
// subject), the other passage that mentions the entity without being about it and
// whose sentences naming it best match what the first hop left unexplained in the
// question: the bridge mentioned on both sides (HippoRAG's passage → entity → passage
// path). A composed question's hops are often passages that mention the bridge, not
// passages about it ("the association which published Journal of Psychotherapy
// Integration": the journal's passage names the American Psychological Association,
// and the passage that names its first president is about adolescence). Each counts
// like a reverse hop, at reverseHopDiscount, and needs one matched term at least.
func (h *hop) mentionHops(ctx context.Context, cands map[string]*hopCandidate, terms []string, first []passageSeed, mentions map[string][]string) error {
	var keys []string
	for _, p := range first {
		own := subjectKeys(h.recs[p.id])
		for _, k := range mentions[p.id] {
			if !slices.Contains(own, k) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	ents, err := h.e.deps.Graph.Entities(ctx, h.corpus, keys)
	if err != nil {
		return fmt.Errorf("reading the entities of the best passages: %w", err)
	}
	mentionedBy, err := h.mentioning(ctx, ents)
	if err != nil {
		return err
	}
	for _, p := range first {
		own := subjectKeys(h.recs[p.id])
		open := unexplained(terms, h.recs[p.id].Text)
		if len(open) == 0 {
			continue
		}
		for _, k := range mentions[p.id] {
			if slices.Contains(own, k) {
				continue
			}
			if best, fm := h.bestMention(p.id, k, mentionedBy[k], open); best != "" {
				h.addHop(cands, best, []string{own[0], k}, p.weight*(1+fm)*reverseHopDiscount)
			}
		}
	}
	return nil
}

// mentioning returns, per entity, the passages that mention it (at most
// maxSubjectChunksPerEntity), their records cached.
func (h *hop) mentioning(ctx context.Context, ents []graphstore.Entity) (map[string][]string, error) {
	out := map[string][]string{}
	var ids []string
	for _, en := range ents {
		out[en.Key] = firstN(en.ChunkIDs, maxSubjectChunksPerEntity)
		ids = append(ids, out[en.Key]...)
	}
	return out, h.records(ctx, ids)
}

// bestMention returns the passage among chunks, other than from and not about key,
// whose sentences naming key hold the most of terms (ties: the better lexical rank),
// and that count; "" when none.
func (h *hop) bestMention(from, key string, chunks, terms []string) (string, float64) {
	best, bestFM := "", 0.0
	for _, c := range chunks {
		r, ok := h.recs[c]
		if !ok || c == from || slices.Contains(subjectKeys(r), key) {
			continue
		}
		fm := factMatch(terms, h.sentences(c), key, subjectKeys(r))
		if fm > bestFM || (fm == bestFM && fm > 0 && h.better(c, best)) {
			best, bestFM = c, fm
		}
	}
	return best, bestFM
}

// addHop adds score to the hop candidate id, created with path when new.
func (h *hop) addHop(cands map[string]*hopCandidate, id string, path []string, score float64) {
	x := cands[id]
	if x == nil {
		x = &hopCandidate{id: id, path: path}
		cands[id] = x
	}
	x.score += score
}

// unexplained returns the terms that text does not contain: what a hop from a passage
// with this text still has to explain.
func unexplained(terms []string, text string) []string {
	padded := " " + normalizeName(text) + " "
	var out []string
	for _, t := range terms {
		if !strings.Contains(padded, " "+t) {
			out = append(out, t)
		}
	}
	return out
}

// questionTerms returns the question's content words, normalized and stemmed.
func questionTerms(q string) []string {
	var out []string
	for w := range strings.FieldsSeq(normalizeName(q)) {
		if queryStop[w] || len(w) < 3 {
			continue
		}
		if s := stem(w); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// stem cuts a word to a prefix that its inflections share ("directed", "director" →
// "direct"): crude, but the same on both sides of a comparison.
func stem(w string) string {
	r := []rune(w)
	if len(r) > 6 {
		return string(r[:6])
	}
	return w
}

// normalizedSentences splits text into sentences, each normalized and padded with
// spaces for whole-word matching.
func normalizedSentences(text string) []string {
	spans := textseg.Sentences(text)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = " " + normalizeName(sp.Text(text)) + " "
	}
	return out
}

// factMatch counts the question's terms in the sentences of a passage that name key:
// the fact that links the passage to key, matched against the question. Words of key
// and of the passage's own subject do not count (they are in every such sentence).
func factMatch(terms, sents []string, key string, own []string) float64 {
	skip := map[string]bool{}
	for _, k := range append([]string{key}, own...) {
		for w := range strings.FieldsSeq(k) {
			skip[stem(w)] = true
		}
	}
	best := 0
	for _, s := range sents {
		if !strings.Contains(s, " "+key+" ") {
			continue
		}
		n := 0
		for _, t := range terms {
			if !skip[t] && strings.Contains(s, " "+t) {
				n++
			}
		}
		best = max(best, n)
	}
	return float64(best)
}

// subjectKeys returns the keys of a chunk's subject: its name and aliases as the chunker
// stored them (offlinextract.Subject), or the title of chunks indexed before it did.
func subjectKeys(r vectorstore.Record) []string {
	name, ok := r.Attrs[schema.ChunkSubject]
	if !ok {
		name = r.Attrs[schema.ChunkTitle]
	}
	keys := []string{normalize.Subject(name)}
	for a := range strings.SplitSeq(r.Attrs[schema.ChunkSubjectAliases], "\n") {
		if k := normalize.Name(a); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}
