// Package normalize holds THE entity-name normalization of the project. The
// grapher applies it when it merges entities and the query service applies it
// when it links question words to entities: both sides must agree, so it
// exists exactly once, here.
//
// Name does, in order:
//
//  1. Unicode NFKC: compatibility forms fold ("Ｔｏｋｙｏ" → "Tokyo",
//     "ﬁ" → "fi", "①" → "1"). NFKC does NOT strip accents: "café" stays
//     "café" (NFKC composes "e" + U+0301 into "é", it never drops the mark).
//     An earlier design note claimed otherwise; that was a mistake. Accents
//     are kept on purpose: they distinguish words ("résumé" vs "resume", "año" vs
//     "ano"), and stripping them is wrong for scripts whose marks are part
//     of the letters (Devanagari, Thai). Accent-insensitive matching, where
//     wanted, belongs to the lexical index, not to the identity of entities.
//  2. Unicode-aware lower case.
//  3. Punctuation and symbols become spaces; letters, digits and marks of
//     every script are kept. Apostrophes and '&' vanish ("O'Brien" → "obrien",
//     "Nolan's" → "nolans", "AT&T" → "att") so that spellings with and without them meet;
//     hyphens and dashes become spaces ("Jean-Paul" → "jean paul") so that
//     "Jean-Paul" and "Jean Paul" meet. A mark that no longer follows a
//     letter or digit is dropped.
//  4. White space collapses to single spaces, ends trimmed.
//  5. Edge stopwords (the, a, an, of, and, or, in, on, for, to, at, by, with,
//     from) are stripped from both ends, but never the last word: "The Who"
//     → "who", "The The" → "the".
//
// Name is idempotent: Name(Name(x)) == Name(x) (fuzz tested).
package normalize
