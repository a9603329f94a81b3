package events

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind names one arrow of the pipeline; it is the middle token of the subject.
type Kind string

// The pipeline's event kinds, in flow order.
const (
	KindDocuments   Kind = "documents"
	KindChunks      Kind = "chunks"
	KindExtractions Kind = "extractions"
	KindCommunities Kind = "communities"
	KindSummaries   Kind = "summaries"
)

// SubjectPrefix is the first token of every subject the platform uses.
const SubjectPrefix = "graphrag"

// Kinds lists every kind in flow order.
var Kinds = []Kind{KindDocuments, KindChunks, KindExtractions, KindCommunities, KindSummaries}

var corpusRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// ValidateCorpus checks a corpus name once for all its uses: it becomes a NATS subject
// token, part of consumer names and part of vector collection names (Milvus allows only
// letters, digits and underscores), so it is lower-case ASCII letters, digits and
// underscores, starting with a letter, at most 63 characters.
func ValidateCorpus(name string) error {
	if !corpusRE.MatchString(name) {
		return &FieldError{Field: "corpus", Problem: fmt.Sprintf("%q must match %s", name, corpusRE)}
	}
	return nil
}

// Subject is the subject events of kind k for corpus travel on.
func Subject(k Kind, corpus string) string {
	return SubjectPrefix + "." + string(k) + "." + corpus
}

// AllSubjects is the wildcard subject of every corpus of kind k.
func AllSubjects(k Kind) string { return SubjectPrefix + "." + string(k) + ".*" }

// DeadLetterSubject is where a stage puts the messages of corpus it gives up on.
func DeadLetterSubject(stage, corpus string) string {
	return SubjectPrefix + ".dlq." + stage + "." + corpus
}

// CorpusFromSubject returns the corpus token of a pipeline subject and checks it.
func CorpusFromSubject(subject string) (string, error) {
	parts := strings.Split(subject, ".")
	if len(parts) < 3 || parts[0] != SubjectPrefix {
		return "", fmt.Errorf("subject %q is not a %s.<kind>.<corpus> subject", subject, SubjectPrefix)
	}
	corpus := parts[len(parts)-1]
	if err := ValidateCorpus(corpus); err != nil {
		return "", fmt.Errorf("subject %q: %w", subject, err)
	}
	return corpus, nil
}
