// Package hashembed is the offline embedder: it turns text into dense vectors
// by feature hashing, with no model and no network, deterministically across
// runs, processes and machines.
//
// Features of a text:
//   - word unigrams: lower-cased words (package textseg), stopwords dropped,
//     a possessive "'s" dropped, light suffix stemming ("films" → "film",
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
// stopwords or punctuation) embeds to the zero vector.
//
// Name() includes a version: it changes whenever the features, hashing or
// weights change, because vectors of different versions are not comparable.
package hashembed
