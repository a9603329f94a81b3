package pipeline

import "github.com/graphrag/graphrag/pkg/events"

// UnroutableCorpus is the corpus token of the dead-letter subject of messages published
// on a subject whose corpus token is invalid (graphrag.dlq.<stage>._unroutable). It is no
// valid corpus name, so it never mixes with a corpus's own dead letters; the original
// subject is in the Graphrag-Dlq-Subject header.
const UnroutableCorpus = "_unroutable"

// deadLetterSubject names the dead-letter subject of a message of the stage's input: its
// corpus's, or the stage's unroutable one when the subject names no valid corpus.
func deadLetterSubject(stage, subject string) string {
	if _, err := events.CorpusFromSubject(subject); err != nil {
		return events.DeadLetterSubject(stage, UnroutableCorpus)
	}
	return events.DeadLetterSubject(stage, lastToken(subject))
}
