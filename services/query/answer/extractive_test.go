package answer

import (
	"slices"
	"strings"
	"testing"

	"github.com/graphrag/graphrag/services/query/evidence"
)

func TestQuestionKind(t *testing.T) {
	for _, tc := range []struct {
		q, kind string
		options []string
	}{
		{"Who keeps Gullhead Lighthouse?", askPerson, nil},
		{"When was the lighthouse first lit?", askDate, nil},
		{"In what year was the man born?", askDate, nil},
		{"Where is the bell displayed?", askPlace, nil},
		{"What city is the band from?", askPlace, nil},
		{"How many homes were damaged?", askNumber, nil},
		{"At the 2011 census, what was the population of the town?", askNumber, nil},
		{"Are Christopher Nolan and Sathish Kalathil both film directors?", askYesNo, nil},
		{"Which band was formed first The Exies or Circus Diablo ?", askChoice, []string{"The Exies", "Circus Diablo"}},
		{"What author was more popular in the 70's, Richard Wright or Richard Bach?", askChoice, []string{"Richard Wright", "Richard Bach"}},
		{"What genre is the author of the story associated with?", askOther, nil},
		{"The soundtrack was produced by a man born in what year?", askDate, nil},
		{"From 1945-1949 Dick Humbert played for an NFL team based in what state?", askPlace, nil},
		{"David Jones is an international in another sport that was started when?", askDate, nil},
	} {
		kind, opts := questionKind(tc.q)
		if kind != tc.kind || !slices.Equal(opts, tc.options) {
			t.Errorf("questionKind(%q) = %s %q, want %s %q", tc.q, kind, opts, tc.kind, tc.options)
		}
	}
}

func chunksOf(texts ...string) evidence.Retrieved {
	var c evidence.Retrieved
	for i, t := range texts {
		c.Chunks = append(c.Chunks, evidence.Chunk{ID: string(rune('a' + i)), Text: t})
	}
	return c
}

// The answer leads with the sentence that answers and names the answer; a pronoun gets
// the person it stands for; no community theme is written into it.
func TestExtractiveAnswerLeadsWithTheAnswer(t *testing.T) {
	c := chunksOf(
		"Gullhead Lighthouse\n\nGullhead Lighthouse was first lit on 2 March 1871. The museum displays the keepers' logbooks and the bell of the schooner Saint Agathe, which sank in 1887.",
		"Three generations\n\nHis daughter, Maren Fenwick, grew up in the keeper's cottage. In 2003 she converted the cottage into the Gullhead Lighthouse Museum, which she still runs.",
	)
	c.Communities = []evidence.Community{{Title: "Lighthouse theme", Summary: "About the light."}}
	got := extractiveAnswer("Who runs the Gullhead Lighthouse Museum?", c)
	if !strings.HasPrefix(got, "Maren Fenwick. ") || !strings.Contains(got, "she [Maren Fenwick] converted the cottage") || !strings.Contains(got, "[2]") {
		t.Errorf("answer %q, want it to lead with Maren Fenwick, resolve the pronoun and cite passage 2", got)
	}
	if strings.Contains(got, "Theme") || strings.Contains(got, "Lighthouse theme") {
		t.Errorf("answer %q carries the community theme", got)
	}
	if got := extractiveAnswer("When was Gullhead Lighthouse first lit?", c); !strings.HasPrefix(got, "2 March 1871. Gullhead Lighthouse was first lit") {
		t.Errorf("date answer %q, want it to lead with 2 March 1871", got)
	}
}

// After the lead, the answer goes on to the sentence that holds the question's words the
// lead lacks (the other hop), even from a passage ranked below the fifth, rather than to
// sentences that repeat the lead's words.
func TestExtractiveAnswerGoesOnToTheOtherHop(t *testing.T) {
	c := chunksOf(
		"Inquiry\n\nThe Storm Hester inquiry was appointed in 1999 and chaired by Ada Quillane.",
		"Storm\n\nStorm Hester hit the bay in 1998, and the inquiry into Storm Hester followed.",
		"Storm damage\n\nStorm Hester flooded Harbour Street.",
		"Storm surge\n\nThe surge of Storm Hester reached 2.4 metres.",
		"Inquiry hearings\n\nThe inquiry held eleven hearings about Storm Hester.",
		"Festival\n\nThe festival remembers Storm Hester every October.",
		"Institute\n\nAda Quillane is a scientist at the Marine Institute, which employs 58 staff.",
	)
	got := extractiveAnswer("Which institute employs the scientist who chaired the Storm Hester inquiry?", c)
	if !strings.Contains(got, "Marine Institute, which employs 58 staff. [7]") {
		t.Errorf("answer %q, want it to go on to the institute (passage 7)", got)
	}
	if !strings.HasPrefix(got, "Marine Institute. ") {
		t.Errorf("answer %q, want it to lead with the institute", got)
	}
}

// The answer leads with the name the evidence supports, not the first name of the best
// passage: the distractor stands in passage 1, the answer in passage 2.
func TestExtractiveAnswerLeadsWithTheSecondPassagesName(t *testing.T) {
	c := chunksOf(
		"Harbour Museum\n\nThe Harbour Museum in Marrow Bay was opened by Mayor Helena Dunmore in 2010.",
		"Harbour Museum curator\n\nThe curator of the Harbour Museum is Tobias Wren, who catalogued its collection.",
	)
	got := extractiveAnswer("Who is the curator of the Harbour Museum?", c)
	if !strings.HasPrefix(got, "Tobias Wren. ") || !strings.Contains(got, "[2]") {
		t.Errorf("answer %q, want it to lead with Tobias Wren and cite passage 2", got)
	}
}

// The README's question: the keepers, not the daughter who runs the museum.
func TestExtractiveAnswerGullheadKeepers(t *testing.T) {
	c := chunksOf(
		"Gullhead Lighthouse and the Fenwick Family\n\nGullhead Lighthouse was first lit on 2 March 1871. Its white stone tower is 31 metres tall and stands on the tip of Gullhead Point, north of Marrow Bay harbour.",
		"Three generations of keepers\n\nThe Fenwick family kept the light for three generations. Arthur Fenwick became keeper in 1922 and served until 1961. His son, Elias Fenwick, took over in 1961 and kept the light for thirty-eight years. Elias Fenwick was the keeper on duty during Storm Hester on 14 October 1998.",
		"The Lighthouse Museum\n\nHis daughter, Maren Fenwick, grew up in the keeper's cottage. In 2003 she converted the cottage into the Gullhead Lighthouse Museum, which she still runs with a small group of volunteers.",
	)
	got := extractiveAnswer("Who keeps Gullhead Lighthouse?", c)
	if !strings.HasPrefix(got, "Arthur Fenwick. ") && !strings.HasPrefix(got, "Elias Fenwick. ") {
		t.Errorf("answer %q, want it to lead with a keeper", got)
	}
}

// With no answer of the kind asked for in the passages, the answer says so.
func TestExtractiveAnswerSaysWhenThePassagesDoNotState(t *testing.T) {
	c := chunksOf("Storm\n\nThe storm flooded the harbour and damaged the old jetty.")
	got := extractiveAnswer("When was the harbour flooded?", c)
	if !strings.HasPrefix(got, "The passages do not state when was the harbour flooded. The storm flooded the harbour") {
		t.Errorf("answer %q, want it to say the passages do not state it", got)
	}
}

func TestExtractiveAnswerYesNoAndChoice(t *testing.T) {
	c := chunksOf(
		"Christopher Nolan is an English-American film director and producer.",
		"Sathish Kalathil is an Indian film director and producer in Malayalam.",
		"Jane Doe is a British novelist.",
	)
	c.Entities = []evidence.Entity{
		{Key: "christopher nolan", Name: "Christopher Nolan"}, {Key: "sathish kalathil", Name: "Sathish Kalathil"},
		{Key: "jane doe", Name: "Jane Doe"},
	}
	if got := extractiveAnswer("Are Christopher Nolan and Sathish Kalathil both film directors?", c); !strings.HasPrefix(got, "Yes. ") {
		t.Errorf("yes/no answer %q, want Yes", got)
	}
	if got := extractiveAnswer("Are Christopher Nolan and Jane Doe both film directors?", c); !strings.HasPrefix(got, "No. ") {
		t.Errorf("yes/no answer %q, want No", got)
	}
	bands := chunksOf(
		"Circus Diablo is an American rock band, formed in early 2006 by Billy Morrison.",
		"The Exies were an American rock band from Los Angeles, formed in 1997.",
	)
	if got := extractiveAnswer("Which band was formed first, The Exies or Circus Diablo?", bands); !strings.HasPrefix(got, "The Exies. ") {
		t.Errorf("choice answer %q, want The Exies (1997 before 2006)", got)
	}
}

// The extractive answers honour the response type: bullets for a local answer, one
// paragraph for a global one; other types leave them as they are.
func TestExtractiveResponseTypes(t *testing.T) {
	ctx := t.Context()
	found := evidence.Retrieved{Chunks: []evidence.Chunk{
		{ID: "c1", Text: "Ada Lovelace wrote the first published algorithm for the Analytical Engine."},
		{ID: "c2", Text: "Lovelace worked with Charles Babbage and translated a memoir by Luigi Menabrea."},
	}}
	q := "What did Ada Lovelace write and who did she work with?"
	plain, err := extractive{}.Local(ctx, q, found, Style{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bullets, err := extractive{}.Local(ctx, q, found, Style{ResponseType: "Bullet Points"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(plain.Text, "- ") {
		t.Errorf("default answer is a list: %q", plain.Text)
	}
	lines := strings.Split(bullets.Text, "\n")
	if len(lines) < 2 {
		t.Fatalf("bullet answer %q has %d lines, want one per cited statement (plain: %q)", bullets.Text, len(lines), plain.Text)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "- ") || !strings.HasSuffix(l, "]") {
			t.Errorf("line %q is not a cited bullet", l)
		}
	}
	if !slices.Equal(bullets.Cited, plain.Cited) {
		t.Errorf("bullets cite %v, plain %v: the same sources in the same order", bullets.Cited, plain.Cited)
	}

	partials := []evidence.PartialAnswer{{CommunityID: "k1", Answer: "Lovelace's algorithm: She wrote it.", Score: 80}, {CommunityID: "k2", Answer: "Babbage's engines: He built them.", Score: 60}}
	prose, err := extractive{}.Reduce(ctx, "main themes?", partials, Style{ResponseType: "Multiple Paragraphs"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	para, err := extractive{}.Reduce(ctx, "main themes?", partials, Style{ResponseType: "Single Paragraph"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := extractive{}.Reduce(ctx, "main themes?", partials, Style{ResponseType: "Bullet Points"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "The most relevant theme is Lovelace's algorithm. She wrote it. [1]\n\nAnother is Babbage's engines. He built them. [2]"; prose.Text != want {
		t.Errorf("multiple paragraphs = %q, want %q", prose.Text, want)
	}
	if want := "The most relevant theme is Lovelace's algorithm. She wrote it. [1] Another is Babbage's engines. He built them. [2]"; para.Text != want {
		t.Errorf("single paragraph = %q, want %q", para.Text, want)
	}
	if want := "The corpus covers these themes:\n- Lovelace's algorithm: She wrote it. [1]\n- Babbage's engines: He built them. [2]"; list.Text != want {
		t.Errorf("bullet points = %q, want %q", list.Text, want)
	}
}
