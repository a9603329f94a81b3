// Package words holds the word-level helpers of the offline text processing that more
// than one part of the platform reads text with: splitting a question into words, the
// question stop words, the stemmers, the connectors that join the words of a name, and
// the weighted content terms that answers and report ranking score text by.
//
// There are three stemmers, and they are not interchangeable: Stem (the offline
// embedder's features), LightStem (the extractive answers' and report ranking's term
// matching) and PrefixStem (the query engine's fact matching). Each was tuned with the
// figures of the part that uses it (docs/evaluation.md); making one serve all three is a
// change of results, to be measured, not a clean-up. They stand side by side here so
// that the difference is stated once.
package words
