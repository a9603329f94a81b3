package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/normalize"
)

// A synthetic corpus for the retrieval benchmarks: sentences of words drawn from a Zipf
// distribution over a generated vocabulary, with planted entities. Entities belong to
// topics of topicSize; a chunk is about one topic, names a few of its entities (the
// central ones more often) and now and then one of another topic, so the entity graph has
// dense topics joined by sparse bridges, as real corpora do. The extraction of a chunk is
// known exactly (no extractor in the loop): its entities, and a relationship between
// consecutive ones.

const (
	topicSize         = 20 // entities per topic
	chunksPerEntity   = 5  // chunks / entities
	chunksPerDoc      = 10
	topicWords        = 8 // words that characterise a topic
	vocabularySize    = 6000
	bridgeProbability = 0.1 // a chunk names an entity of another topic
)

var benchEntityTypes = []string{"PERSON", "ORGANIZATION", "LOCATION", "CONCEPT", "EVENT"}

var benchRelationTypes = []string{"WORKS_WITH", "LOCATED_IN", "FUNDS", "STUDIES", "OPPOSES", "CAUSES", "PART_OF"}

type synthEntity struct {
	name, typ, desc string
	topic           int
}

type synthChunk struct {
	id, docID, title, text string
	topic                  int
	mentions               []int // entity indexes, in order of mention
}

type synthCorpus struct {
	vocab    []string
	entities []synthEntity
	topics   [][]string // topic words
	chunks   []synthChunk
}

// benchPseudoWord builds a pronounceable word of n syllables.
func benchPseudoWord(rng *rand.Rand, n int) string {
	const cons = "bcdfghklmnprstvz"
	const vows = "aeiou"
	var b strings.Builder
	for range n {
		b.WriteByte(cons[rng.IntN(len(cons))])
		b.WriteByte(vows[rng.IntN(len(vows))])
		if rng.IntN(3) == 0 {
			b.WriteByte(cons[rng.IntN(len(cons))])
		}
	}
	return b.String()
}

func benchCapitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// newSynthCorpus generates a corpus of n chunks, deterministically from seed.
func newSynthCorpus(n int, seed uint64) *synthCorpus {
	rng := rand.New(rand.NewPCG(seed, 7))
	c := &synthCorpus{}
	seen := map[string]bool{}
	for len(c.vocab) < vocabularySize {
		w := benchPseudoWord(rng, 2+rng.IntN(2))
		if !seen[w] {
			seen[w] = true
			c.vocab = append(c.vocab, w)
		}
	}
	nEnt := max(n/chunksPerEntity, topicSize)
	nTopics := (nEnt + topicSize - 1) / topicSize
	// Topic words come from the middle of the frequency ranking: frequent enough to
	// recur, rare enough to say something.
	for range nTopics {
		ws := make([]string, topicWords)
		for i := range ws {
			ws[i] = c.vocab[200+rng.IntN(vocabularySize-200)]
		}
		c.topics = append(c.topics, ws)
	}
	keys := map[string]bool{}
	for len(c.entities) < nEnt {
		name := benchCapitalize(benchPseudoWord(rng, 2)) + " " + benchCapitalize(benchPseudoWord(rng, 2+rng.IntN(2)))
		k := normalize.Name(name)
		if k == "" || keys[k] || seen[strings.ToLower(name)] {
			continue
		}
		keys[k] = true
		topic := len(c.entities) / topicSize
		typ := benchEntityTypes[rng.IntN(len(benchEntityTypes))]
		tw := c.topics[topic]
		c.entities = append(c.entities, synthEntity{name: name, typ: typ, topic: topic,
			desc: fmt.Sprintf("%s is a %s known for %s and %s.", name, strings.ToLower(typ), tw[0], tw[1+rng.IntN(topicWords-1)])})
	}
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(vocabularySize-1))
	central := rand.NewZipf(rng, 1.3, 1, topicSize-1) // central entities of a topic are named more
	for i := range n {
		topic := rng.IntN(nTopics)
		first := topic * topicSize
		size := min(topicSize, nEnt-first)
		k := 3 + rng.IntN(2)
		var mentions []int
		for len(mentions) < k {
			e := first + int(central.Uint64())%size
			if rng.Float64() < bridgeProbability/float64(k) {
				e = rng.IntN(nEnt)
			}
			if !slices.Contains(mentions, e) {
				mentions = append(mentions, e)
			}
		}
		var b strings.Builder
		for s, e := range mentions {
			if s > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(c.sentence(rng, zipf, topic, c.entities[e].name))
		}
		doc := i / chunksPerDoc
		text := b.String()
		// Each document is titled after an entity, as encyclopedia pages are, so the
		// subject list has passages to find.
		c.chunks = append(c.chunks, synthChunk{
			id:    fmt.Sprintf("doc%06d:%d:%s", doc, i%chunksPerDoc, events.Hash(text)[:8]),
			docID: fmt.Sprintf("doc%06d", doc), title: c.entities[doc%len(c.entities)].name,
			text: text, topic: topic, mentions: mentions,
		})
	}
	return c
}

// sentence is one sentence naming an entity: Zipf words with the topic's words mixed in.
func (c *synthCorpus) sentence(rng *rand.Rand, zipf *rand.Zipf, topic int, entity string) string {
	n := 12 + rng.IntN(8)
	at := rng.IntN(n / 2)
	words := make([]string, 0, n+2)
	for i := range n {
		if i == at {
			words = append(words, entity)
		}
		if rng.IntN(5) == 0 {
			words = append(words, c.topics[topic][rng.IntN(topicWords)])
		} else {
			words = append(words, c.vocab[zipf.Uint64()])
		}
	}
	words[0] = benchCapitalize(words[0])
	return strings.Join(words, " ") + "."
}

// extraction is what an extractor would have found in chunk i.
func (c *synthCorpus) extraction(corpus string, i int) *events.Extraction {
	ch := c.chunks[i]
	x := &events.Extraction{Schema: events.SchemaExtraction, Corpus: corpus, ChunkID: ch.id, DocumentID: ch.docID,
		Method: "synthetic/v1"}
	for _, e := range ch.mentions {
		en := c.entities[e]
		x.Entities = append(x.Entities, events.ExtractedEntity{Name: en.name, Type: en.typ, Description: en.desc})
	}
	for j := 1; j < len(ch.mentions); j++ {
		a, b := c.entities[ch.mentions[j-1]], c.entities[ch.mentions[j]]
		typ := benchRelationTypes[(ch.mentions[j-1]+ch.mentions[j])%len(benchRelationTypes)]
		x.Relationships = append(x.Relationships, events.ExtractedRelationship{Source: a.name, Target: b.name, Type: typ,
			Description: fmt.Sprintf("%s %s %s in matters of %s.", a.name, strings.ToLower(strings.ReplaceAll(typ, "_", " ")), b.name, c.topics[ch.topic][0]),
			Strength:    0.5 + 0.1*float64(j%5)})
	}
	return x
}

// questions generates n local questions: about two entities of a topic, about one entity
// and the topic's words, and about the topic's words alone (no entity named: linking must
// go through entity embeddings).
func (c *synthCorpus) questions(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 11))
	out := make([]string, 0, n)
	for len(out) < n {
		ch := c.chunks[rng.IntN(len(c.chunks))]
		tw := c.topics[ch.topic]
		a := c.entities[ch.mentions[0]].name
		b := c.entities[ch.mentions[len(ch.mentions)-1]].name
		switch len(out) % 10 {
		case 0, 1, 2, 3, 4:
			out = append(out, fmt.Sprintf("How is %s connected to %s?", a, b))
		case 5, 6, 7:
			out = append(out, fmt.Sprintf("What did %s do about %s and %s?", a, tw[rng.IntN(topicWords)], tw[rng.IntN(topicWords)]))
		default:
			out = append(out, fmt.Sprintf("Who works on %s %s?", tw[rng.IntN(topicWords)], tw[rng.IntN(topicWords)]))
		}
	}
	return out
}
