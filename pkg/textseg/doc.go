// Package textseg splits text into sentences and words, with byte offsets into
// the source. It is the one sentence splitter of the project: chunking,
// offline extraction and the hash embedder all segment text through it, so a
// sentence means the same thing everywhere.
//
// The splitter is rule based and language agnostic where it can be: a
// sentence ends at '.', '!', '?', '…' (or the CJK '。', '！', '？') followed by
// white space and a rune that can start a sentence, at a blank line, before a
// Markdown block line (heading, list item, table row, quote), and around a
// field line ("Subject: …", "Reported by: …": IsFieldLine), the header lines of
// e-mails, tickets and reports. Known
// abbreviations ("Dr.", "e.g.", "U.S.") and single-letter initials
// ("J. R. R. Tolkien") do not end a sentence.
//
// Words are runs of letters and digits. ScriptWords adds the word boundaries of
// the scripts written without spaces (UAX #29 without a dictionary): each Han
// ideograph and Hiragana letter is a word, a Katakana run is one, and a change of
// script ends a word; the offline extractor reads Chinese and Japanese with it.
package textseg
