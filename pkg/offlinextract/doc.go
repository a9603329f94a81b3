// Package offlinextract is the offline entity and relationship extractor: no
// LLM, no model, deterministic. It is the "fast" indexing of Microsoft
// GraphRAG / LazyGraphRAG, and the offline product's graph is only as good as
// what it finds, so its rules are written down here.
//
// # Entities
//
// Names are found per sentence (package textseg):
//
//   - Proper-noun phrases: maximal runs of capitalized words. Connectors (of,
//     the, de, da, di, del, van, von, der, du, la, le, y, bin, ibn, al, …; at
//     most two in a row) may join capitalized words, never start or end a
//     name ("University of Oxford", "Leonardo da Vinci"). "and" joins only
//     inside an organization name that already has a connector ("Department
//     of Health and Human Services"), so lists of people are not fused. "&"
//     joins ("Procter & Gamble"), and so does the period of an initial ("J. K.
//     Rowling"). A name ends at a possessive ("Nolan's" → "Nolan").
//   - Sentence-initial capitals are not evidence. At the start of a sentence
//     (or after a colon or an opening quote) a first word from the common-word
//     list (function words, pronouns, sentence adverbs: "The", "In",
//     "However", …) is dropped, and a remaining single word is kept only if it
//     is capitalized inside some sentence of the chunk, is a word of the
//     title, or is an acronym. Multiword names are kept.
//   - Not names: "I" (and "I'm", "I'll" opening a name), weekdays, months (unless WithDates), hyphenated
//     adjectives ("Los Angeles-based"), a demonym used as an adjective
//     ("British comedy film", "South Korean singer"), which would otherwise
//     link everything British, abbreviations cut off by punctuation ("Inc",
//     "Jr") and common-noun acronyms ("TV", "DVD"). A participle opening a
//     sentence is dropped ("Starring Rajendra Prasad" → "Rajendra Prasad").
//     The period of a title abbreviation joins ("Dr. August Francke"), and
//     an honorific before two or more name words is dropped ("Mayor George
//     Moscone" → "George Moscone", typed PERSON; "King George" stays).
//   - Acronyms: all-capital words of 2–6 letters (not in all-capital
//     sentences).
//   - CONCEPT noun phrases (WithNounPhrases, default on): after a determiner,
//     two or three lower-case content words, the last not a participle or a
//     verb before its object ("the demon algorithm"), kept only when two
//     sentences of the chunk or more name it: "the eastern end" said once is a
//     description, not a thing of the graph. A heuristic, not a tagger: no
//     offline POS model is used, to keep the module free of model files;
//     concepts rank below names.
//   - Chinese and Japanese (cjk.go), which have neither capitals nor spaces:
//     the text is cut into ideographs (textseg.ScriptWords, the word
//     boundaries of UAX #29 without a dictionary), runs of ideographs are cut
//     again at function characters (的, 是, 在, 与, …) and Hiragana, and a
//     part is a name when an interpunct joins a transliterated name ("艾达·奎兰",
//     PERSON), or when it ends with a word that says its type after two
//     characters or more ("马罗湾海洋研究所" ORGANIZATION, "布拉克沃特藻华事件"
//     EVENT; a one-character place word such as 湾 or 市 only if the name
//     recurs in the chunk). Titles between 《》 are WORKs. No dictionary of
//     names is used.
//   - Headings ("# …") label the text: they give no entities.
//   - Dates (WithDates, default off): years 1000–2099 and months.
//
// # Semi-structured text
//
// Tickets, e-mails, incident reports and meeting notes carry structure in their
// layout (layout.go):
//
//   - A line break, a tab or a run of spaces (a column) ends a name: "Reporter:
//     Kahe Cakucelski\nAssignee: …" gives "Kahe Cakucelski", never "Kahe
//     Cakucelski Assignee". A word that opens a line (after a list bullet or a
//     heading mark) or a column is treated as sentence-initial.
//   - Field labels are markup: one to three words before a colon that open a
//     line of a header block (two field lines or more in a row) or a column
//     ("Subject:", "Reported by:", "Status:"). The value after the label is
//     ordinary text; a Title Case pair before a colon stays a name ("Ada
//     Quillane: agreed", a speaker). A lone "Word: …" line is text ("Turkey: The
//     torch relay leg …"). Field lines are sentences of their own (package
//     textseg).
//   - Calendar words are no entities: month and weekday abbreviations in a date
//     ("Mon, 3 Jun 2024"; "Jan Smith" keeps its name), time zones written in
//     capitals ("UTC", "CET") and quarters ("Q3", "FY24").
//   - Identifiers: capitals and digits joined by '-', '_' or '.' ("INC-3757",
//     "CVE-2021-44228") are name words as any capitalized word ("FIFA U-20 World
//     Cup") and stay names at the start of a line; they get no acronym vote for
//     ORGANIZATION. Lower-case identifiers are names of their own: tokens with
//     '_' or an inner '.' ("ledger_svc", "config.yaml"), tokens whose hyphenated
//     parts mix letters and digits ("k8s-proxy"), and words joined by hyphens
//     ("cache-worker") if no part is an English affix, particle or number
//     ("co-founder", "follow-up", "long-term"), the last part is no participle
//     or adverb ("award-winning", "so-called"), and the chunk uses the word as a
//     name at least once: at the start of a line, alone in parentheses, or with
//     neither a determiner before it nor a noun or name after it ("hits
//     cache-worker, nothing else"; not "a well-known singer-songwriter",
//     "comedy-drama film"). No noun phrase contains an identifier. E-mail
//     addresses are no entities.
//   - Descriptions come from prose: a header line describes an entity only
//     when no other sentence mentions it, a heading never (the chunk's first
//     prose sentence then, else no description).
//
// Mentions are grouped by normalize.Name. A one-word name merges into the
// only longer name of the chunk that starts or ends with it ("Nolan" →
// "Christopher Nolan"), and a fuller form of the title ("Christopher Edward
// Nolan", "Captain Konstantin Konstantinovich Vakulovsky") merges into the
// title. The displayed name is the most frequent surface form.
//
// # Types
//
// Votes from cues, the type with most votes wins if it has at least 1, else
// OTHER: the head word of the name (the last word, or the last before "of";
// a first word when the last is no cue: "Storm Hester") decides over the
// words that qualify it ("Marrow Bay Marine Institute" is an ORGANIZATION,
// "Town Council" too), with cue words such as University, Records →
// ORGANIZATION; County, River → PLACE; War, Festival → EVENT; the head noun
// of a predicate of the name's own sentence, not of a name after a
// preposition ("a scientist at the Institute, has been a councillor" says
// nothing of the institute)
// "X is/was a …" ("an English film director" → PERSON; "a 2006 film" →
// WORK; "a town" → PLACE; "a method" → CONCEPT), also for the title and its
// parenthetical ("The Prestige (film)" → WORK); a preceding honorific ("Dr.",
// "King") or role ("actor", "starring", "directed by", also for later items
// of the same list) → PERSON; a small gazetteer of countries, continents,
// states and large cities (gazetteer.go) → PLACE; "X (born …" → PERSON; "born in X" and "in X,
// Y" → PLACE; "the film X" or a quoted name → WORK; an acronym →
// ORGANIZATION (weakly); years and months → DATE; noun phrases → CONCEPT.
// A person needs evidence of a person, and a name that could not be one (a
// connector, "and", or a cue word of another type: "Gullhead Lighthouse and
// the Fenwick Family") gets none from pronouns or an honorific: a role before
// the name ("harbourmaster Colin Strand", "His daughter, Maren Fenwick"), a
// verb of persons after it ("retired", "joined", "became keeper"), "he" or
// "she" opening the next sentence, a family name the chunk speaks of ("the
// Fenwick family" → "Maren Fenwick"), or the family name of another person
// of the chunk ("Hugh Calloway" beside "Ines Calloway").
//
// # Document title
//
// Extract takes the document title. It is an entity of every chunk of the
// document (a trailing parenthetical such as "(film)" is dropped from the name
// and used as a type cue) and is related to every other entity of the chunk:
// this links passages about X to passages that mention X, which multi-hop
// questions need. Its description is the first sentence that mentions it,
// else the chunk's first sentence; never a heading (nor is any description).
// The title comes from Subject (the document's title, or the subject its text
// names), also when only a Markdown heading repeats it: the query engine's list
// of passages about an entity depends on it (ADR 0067). A title that could not
// be a person's name ("Gullhead Lighthouse and the Fenwick Family") gets no
// PERSON vote from the pronouns of the text.
//
// # Relationships
//
// Two entities are related when they occur in the same sentence; the title
// counts as occurring in every sentence. n is the number of sentences where
// they co-occur and Strength = 1 − 0.5ⁿ (0.5, 0.75, 0.875, …). The type is
// RELATED_TO unless a verb stands between two consecutive mentions, at most
// six words apart with only auxiliaries or adverbs before it: "Steve Jobs
// founded Apple" → FOUNDED, "born in" → BORN_IN, and a passive with "by"
// reverses the direction ("Inception was directed by Christopher Nolan" →
// Christopher Nolan DIRECTED Inception). The description is the first
// sentence where both occur (for title links, the first sentence of the other
// entity).
//
// # Caps
//
// At most 25 entities (the title first, then by number of sentences, names
// before concepts, then first occurrence) and 40 relationships (links of the
// title first, then by co-occurrence count, typed before RELATED_TO, then by
// name) per chunk, configurable. Descriptions are trimmed to 300 bytes at a
// word boundary.
package offlinextract
