// Package hashembed is the offline embedder: it turns text into dense vectors
// by feature hashing, with no model and no network, deterministically across
// runs, processes and machines.
//
// Features of a text:
//   - word unigrams: lower-cased words (package textseg), stopwords dropped
//     unless written in capitals with two letters or more ("ALL", "IT", "US"
//     name things: an acronym keeps its identity), a possessive "'s" dropped, light suffix stemming ("films" → "film",
//     "studies" → "studi", "directed" → "direct");
//   - word bigrams of consecutive kept words;
//   - character 3- and 4-grams of each kept word (before stemming, with
//     boundary marks "<" and ">"), so that "Nolan" and "Nolan's" or "color"
//     and "colors" share most features.
//
// Each feature is hashed twice with FNV-1a under two different seeds: one
// hash picks the dimension, the other the sign (signed feature hashing keeps
// the inner product unbiased). Its weight is groupWeight × (1 + ln tf); the
// vector is then L2-normalized. A text without features (empty, only
// stopwords or punctuation) embeds to the zero vector: a question of
// stopwords has no direction to search in. Writers need one for every
// non-empty text (vector stores refuse the zero vector): Fallback gives it
// from all its words, stopwords included, or the whole text without words,
// and llm.NonZero applies it to any embedder.
//
// Name() includes a version: it changes whenever the features, hashing or
// weights change, because vectors of different versions are not comparable.
package hashembed
