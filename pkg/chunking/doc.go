// Package chunking cuts documents into token-bounded chunks for embedding and
// extraction, and scores how much information a piece of text carries so that
// navigation bars, number tables and boilerplate can be kept out of the graph.
//
// Token counts come from the cl100k_base BPE tokenizer of
// github.com/tiktoken-go/tokenizer, whose vocabulary is compiled into the
// binary: nothing is downloaded at run time.
//
// Split cuts on Markdown section boundaries first (ATX headings "#" to
// "######" outside fenced code; each chunk records its heading path, e.g.
// "Guide > Install"), then prefers paragraph boundaries, then sentence
// boundaries (package textseg), and cuts a sentence only when it alone is
// larger than the chunk size, then between words, and inside a word only
// when a single word is larger than the chunk size (at the end of the longest
// run of whole tokens that fits). Splitting takes time linear in the text
// whatever its shape: token counts are reused across the search for each cut
// (see count.go), so a long line without spaces costs about what as much prose
// does (BenchmarkSplitLinear). Consecutive chunks of a
// section overlap by whole sentences (up to the overlap budget); chunks never
// overlap across sections. A chunk smaller than the minimum is merged into its
// neighbour when the result still fits.
//
// Every chunk's Text is exactly source[Start:End], and its ID is
//
//	<documentID>:<position>:<first 12 hex digits of sha256(Text)>
//
// so the same input always gives the same ids, and a changed chunk gets a new
// id even when its position does not change. ContentHash is the full hex
// sha256 of Text.
package chunking
