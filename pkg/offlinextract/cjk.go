package offlinextract

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/normalize"
	"github.com/graphrag/graphrag/pkg/textseg"
)

// Names in Chinese and Japanese text. These scripts have no capitals and no spaces,
// so the evidence of a name is of other kinds (see the package doc): the interpunct
// of a transliterated name ("艾达·奎兰"), the title marks of a work ("《…》"), and a
// name that ends with a word saying what it is ("…研究所", "…委员会", "…湾"). Text is
// cut into ideographs by textseg.ScriptWords; a run of ideographs is cut again at the
// function characters (particles, prepositions, pronouns) and at every Hiragana
// letter, which write the grammar around names in Chinese and Japanese.

// cjkFunction are the Chinese function characters that no name of this extractor
// contains: particles, prepositions, conjunctions, copulas and pronouns.
var cjkFunction = set(`的 地 得 是 在 于 於 与 與 和 及 或 了 着 著 过 過 被 把 从 從 向 对 對 为 為 由 以 将 將 也
都 而 并 並 但 就 其 这 這 那 他 她 它 我 你 们 們 该 該 每 各 又 还 還 很`)

// cjkSuffixes are the words that end a name and say its type; the part before must be
// two characters or more ("研究所" alone is the common noun).
var cjkSuffixes = map[string]string{
	// organizations
	"研究所": TypeOrganization, "研究院": TypeOrganization, "大学": TypeOrganization, "大學": TypeOrganization,
	"学院": TypeOrganization, "學院": TypeOrganization, "公司": TypeOrganization, "集团": TypeOrganization,
	"银行": TypeOrganization, "銀行": TypeOrganization, "委员会": TypeOrganization, "委員會": TypeOrganization,
	"委員会": TypeOrganization, "协会": TypeOrganization, "協會": TypeOrganization, "協会": TypeOrganization,
	"学会": TypeOrganization, "合作社": TypeOrganization, "议会": TypeOrganization, "議會": TypeOrganization,
	"議会": TypeOrganization, "政府": TypeOrganization, "博物馆": TypeOrganization, "博物館": TypeOrganization,
	"图书馆": TypeOrganization, "圖書館": TypeOrganization, "図書館": TypeOrganization, "医院": TypeOrganization,
	"醫院": TypeOrganization, "病院": TypeOrganization, "学校": TypeOrganization, "學校": TypeOrganization,
	"中学": TypeOrganization, "小学": TypeOrganization, "基金会": TypeOrganization, "俱乐部": TypeOrganization,
	"乐队": TypeOrganization, "会社": TypeOrganization, "联盟": TypeOrganization,
	// events
	"事件": TypeEvent, "战争": TypeEvent, "戰爭": TypeEvent, "戦争": TypeEvent, "战役": TypeEvent,
	"风暴": TypeEvent, "風暴": TypeEvent, "台风": TypeEvent, "颱風": TypeEvent, "台風": TypeEvent,
	"地震": TypeEvent, "会议": TypeEvent, "會議": TypeEvent, "革命": TypeEvent, "选举": TypeEvent,
	// places
	"海峡": TypePlace, "半岛": TypePlace, "群岛": TypePlace, "山脉": TypePlace,
	"湾": TypePlace, "灣": TypePlace, "市": TypePlace, "省": TypePlace, "县": TypePlace, "縣": TypePlace,
	"県": TypePlace, "岛": TypePlace, "島": TypePlace, "河": TypePlace, "江": TypePlace, "湖": TypePlace,
	"山": TypePlace, "港": TypePlace, "镇": TypePlace, "鎮": TypePlace, "村": TypePlace, "州": TypePlace,
	"川": TypePlace, "町": TypePlace,
}

// cjkSuffixOrder lists cjkSuffixes longest first, in a fixed order: the result must not
// depend on map order when two type words end at the same character.
var cjkSuffixOrder = func() []string {
	out := make([]string, 0, len(cjkSuffixes))
	for s := range cjkSuffixes {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	return out
}()

// maxCJKName bounds the characters of a name.
const maxCJKName = 16

func isInterpunct(gap string) bool {
	return gap == "·" || gap == "・" || gap == "‧" || gap == "•"
}

// cjkToken reports whether t is one ideograph, Katakana run or Hiragana letter.
func cjkToken(t token) bool {
	r, _ := utf8.DecodeRuneInString(t.text)
	return textseg.IsUnspaced(r)
}

func hiragana(t token) bool {
	r, _ := utf8.DecodeRuneInString(t.text)
	return r >= 'ぁ' && r <= 'ゟ'
}

// cjkNames finds the names of sentence i written in Chinese or Japanese.
func (x *extractor) cjkNames(i int) {
	s := x.sents[i]
	for k := 0; k < len(s.toks); {
		if !cjkToken(s.toks[k]) {
			k++
			continue
		}
		// A run: ideographs with nothing between them, or an interpunct.
		end := k + 1
		for end < len(s.toks) && cjkToken(s.toks[end]) {
			gap := x.text[s.toks[end-1].end:s.toks[end].start]
			if gap != "" && !isInterpunct(gap) {
				break
			}
			end++
		}
		// A work's title is one name (cjkQuoted), not a run of names.
		if before := x.text[s.start:s.toks[k].start]; !strings.HasSuffix(before, "《") && !strings.HasSuffix(before, "〈") {
			x.cjkRun(i, k, end)
		}
		k = end
	}
	x.cjkQuoted(i)
}

// cjkRun cuts the run of tokens [from, to) of sentence i at function characters and
// finds a name in each part.
func (x *extractor) cjkRun(i, from, to int) {
	s := x.sents[i]
	start := from
	for k := from; k <= to; k++ {
		if k < to && !cjkFunction[s.toks[k].text] && !hiragana(s.toks[k]) {
			continue
		}
		if k > start {
			x.cjkSegment(i, start, k)
		}
		start = k + 1
	}
}

// cjkSegment finds the name of tokens [from, to) of sentence i, a part of a run
// without function characters: a transliterated name joined by an interpunct, else
// the longest opening of the part that ends with a type word.
func (x *extractor) cjkSegment(i, from, to int) {
	s := x.sents[i]
	for k := from + 1; k < to; k++ {
		if isInterpunct(x.text[s.toks[k-1].end:s.toks[k].start]) {
			if to-from <= maxCJKName {
				x.addTyped(i, from, to, TypePerson)
			}
			return
		}
	}
	for end := min(to, from+maxCJKName); end > from; end-- {
		for _, suffix := range cjkSuffixOrder {
			typ := cjkSuffixes[suffix]
			n := utf8.RuneCountInString(suffix)
			if end-from < n+2 || x.text[s.toks[end-n].start:s.toks[end-1].end] != suffix {
				continue
			}
			// A one-character place word ("湾", "市") ends many common words too: the
			// name must come back in the chunk.
			name := x.text[s.toks[from].start:s.toks[end-1].end]
			if n == 1 && strings.Count(x.text, name) < 2 {
				continue
			}
			x.addTyped(i, from, end, typ)
			return
		}
	}
}

// cjkQuoted finds the titles of works between the title marks 《》 and 〈〉.
func (x *extractor) cjkQuoted(i int) {
	s := x.sents[i]
	for k := 0; k < len(s.toks); k++ {
		before := x.text[s.start:s.toks[k].start]
		if !strings.HasSuffix(before, "《") && !strings.HasSuffix(before, "〈") {
			continue
		}
		closer := "》"
		if strings.HasSuffix(before, "〈") {
			closer = "〉"
		}
		for end := k + 1; end <= len(s.toks) && end-k <= 3*maxCJKName; end++ {
			after := x.text[s.toks[end-1].end:]
			if end < len(s.toks) {
				after = x.text[s.toks[end-1].end:s.toks[end].start]
			}
			if strings.HasPrefix(after, closer) {
				x.addTyped(i, k, end, TypeWork)
				k = end - 1
				break
			}
		}
	}
}

// addTyped records tokens [ts, te) of sentence i as a name whose type the text
// states.
func (x *extractor) addTyped(i, ts, te int, typ string) {
	s := x.sents[i]
	from, to := s.toks[ts].start, s.toks[te-1].end
	surface := x.text[from:to]
	key := normalize.Name(surface)
	if utf8.RuneCountInString(key) < 2 {
		return
	}
	x.mentions = append(x.mentions, mention{key: key, surface: surface, sent: i, ts: ts, te: te, start: from, proper: true, typ: typ})
}
