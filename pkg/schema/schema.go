package schema

import "github.com/graphrag/graphrag/pkg/events"

// Kind is a kind of vector collection; every corpus has one collection of
// each kind.
type Kind string

// Collection kinds.
const (
	// Chunks holds a corpus's chunks: dense and BM25 search over their text.
	Chunks Kind = "chunks"
	// Entities holds the entities of a corpus's graph, for entity linking.
	Entities Kind = "entities"
	// Communities holds the community reports.
	Communities Kind = "communities"
)

// Collection names the vector collection of a kind for a corpus:
// "<corpus>_<kind>".
func Collection(corpus string, k Kind) string { return corpus + "_" + string(k) }

// Attributes of chunk records, written by the extractor.
const (
	// ChunkDocumentID is the id of the document the chunk belongs to.
	ChunkDocumentID = "document_id"
	// ChunkTitle is the document's title.
	ChunkTitle = "title"
	// ChunkSection is the chunk's Markdown section path.
	ChunkSection = "section"
	// ChunkPosition is the chunk's index in its document, in decimal.
	ChunkPosition = "position"
	// ChunkSkip says why the chunk is not extracted; empty when it is.
	ChunkSkip = "skip"
	// ChunkSubject names the entity the chunk's document is about
	// (offlinextract.Subject); empty when the document does not say. Chunks
	// written before it existed lack it: their subject is their title's.
	ChunkSubject = "subject"
	// ChunkSubjectAliases holds the subject's other names, one per line.
	ChunkSubjectAliases = "subject_aliases"
)

// Attributes of entity records, written by the grapher.
const (
	// EntityName is the entity's surface name.
	EntityName = "name"
	// EntityType is the entity's type.
	EntityType = "type"
	// EntityTextHash is the first 16 hex digits of the hash of the record's
	// text: an entity whose text has not changed is not embedded again.
	EntityTextHash = "desc_hash"
)

// Attributes of community report records, written by the summarizer.
const (
	// ReportLevel is the community's level, in decimal (0 is the finest).
	ReportLevel = "level"
	// ReportParent is the id of the community one level up; empty at the top.
	ReportParent = "parent"
	// ReportTitle is the report's title.
	ReportTitle = "title"
	// ReportRating is the report's importance rating, 0 to 10, in decimal.
	ReportRating = "rating"
	// ReportMembers counts the community's entities, in decimal.
	ReportMembers = "member_count"
	// ReportRelationships counts the relationships inside it, in decimal.
	ReportRelationships = "relationship_count"
	// ReportJSON is the whole report as JSON (type Report).
	ReportJSON = "report"
	// ReportMethod says how the report was written ("extractive/v1",
	// "llm/<model>", ...).
	ReportMethod = "method"
	// ReportRun is the community detection run whose event the report was
	// written for (events.Community.Run).
	ReportRun = "run"
)

// Buckets the pipeline provisions (pipeline.Provision).
const (
	// StateBucket is a key-value bucket of small per-corpus records: the
	// grapher's progress (GraphStateKey), the chunks of each document
	// version (DocumentKey), entity type counts (TypeCountsKey), the
	// taxonomy (TaxonomyKey) and each corpus's extraction settings
	// (ExtractionSettingsKey).
	StateBucket = "graphrag_state"
	// LLMCacheBucket is a key-value bucket of LLM responses shared by every
	// replica; package llm derives its keys from the requests.
	LLMCacheBucket = "graphrag_llm_cache"
	// LeaseBucket is a key-value bucket of the leases of single-active
	// services; its entries expire unless renewed.
	LeaseBucket = "graphrag_leases"
	// DocumentBucket is an object store of documents too large for one
	// message (DocumentObject).
	DocumentBucket = "graphrag_documents"
)

// GraphStateKey is where the grapher keeps its progress on a corpus in
// StateBucket (pipeline.GraphState).
func GraphStateKey(corpus string) string { return "grapher." + corpus }

// DocumentKey is where the chunker records the current version of a document
// in StateBucket (pipeline.DocumentRecord). The document id is hashed: ids may
// hold characters that keys may not.
func DocumentKey(corpus, documentID string) string {
	return DocumentPrefix(corpus) + events.Hash(documentID)[:32]
}

// DocumentPrefix begins the DocumentKey of every document of a corpus.
func DocumentPrefix(corpus string) string { return "doc." + corpus + "." }

// CorpusKey is where the chunker records the last drop of a corpus in
// StateBucket (pipeline.CorpusRecord).
func CorpusKey(corpus string) string { return "corpus." + corpus }

// CacheScope names the LLM cache entries (in LLMCacheBucket) made from the
// content of one document: the chunker and the extractor call the model under
// it, and deleting the document deletes the entries (llm.ForgetScope). It is a
// prefix of whole key tokens.
func CacheScope(corpus, documentID string) string {
	return CorpusCacheScope(corpus) + events.Hash(documentID)[:32] + "."
}

// CorpusCacheScope begins the CacheScope of every document of a corpus.
func CorpusCacheScope(corpus string) string { return "doc." + corpus + "." }

// QuarantineKey is where a stage records a record of a corpus that a store refused
// as invalid in StateBucket (pipeline.Quarantined). The collection and record id are
// hashed: ids may hold characters that keys may not.
func QuarantineKey(corpus, stage, collection, id string) string {
	return QuarantineStagePrefix(corpus, stage) + events.Hash(collection, id)[:32]
}

// QuarantinePrefix begins the QuarantineKey of every record of a corpus.
func QuarantinePrefix(corpus string) string { return "quarantine." + corpus + "." }

// QuarantineStagePrefix begins the QuarantineKey of every record a stage quarantined
// in a corpus.
func QuarantineStagePrefix(corpus, stage string) string {
	return QuarantinePrefix(corpus) + stage + "."
}

// TypeCountsPrefix begins the keys of TypeCountsKey.
const TypeCountsPrefix = "types."

// TypeCountsKey is where the grapher keeps the mentions per entity type of a
// corpus in StateBucket (a JSON object of counts).
func TypeCountsKey(corpus string) string { return TypeCountsPrefix + corpus }

// CurationLogKey is where a corpus's curation log lives in StateBucket (package
// curation): the query service appends to it, the grapher applies it.
func CurationLogKey(corpus string) string { return "curation.log." + corpus }

// CurationAppliedKey is where the grapher records how many entries of a corpus's
// curation log its graph has applied (a decimal count).
func CurationAppliedKey(corpus string) string { return "curation.applied." + corpus }

// CurationStatusKey is where the grapher records whether each curation operation of a
// corpus is still active (a JSON object by operation id).
func CurationStatusKey(corpus string) string { return "curation.status." + corpus }

// CurationOriginalKey is where the grapher keeps the extraction of a chunk as
// extracted, before curation changed it, in StateBucket. The chunk id is hashed.
func CurationOriginalKey(corpus, chunkID string) string {
	return CurationOriginalPrefix(corpus) + events.Hash(chunkID)[:32]
}

// CurationOriginalPrefix begins the CurationOriginalKey of every chunk of a corpus.
func CurationOriginalPrefix(corpus string) string { return "curation.orig." + corpus + "." }

// TaxonomyKey is where the consolidated entity types live in StateBucket
// (taxonomy.Taxonomy): the grapher writes them, the extractor reads them.
const TaxonomyKey = "taxonomy"

// ExtractionSettingsKey is where a corpus's extraction settings live in StateBucket
// (extractsettings.Record): the query service writes them, the extractor reads them.
func ExtractionSettingsKey(corpus string) string { return "extraction." + corpus }

// GrapherLease is the grapher's lease in LeaseBucket: one active grapher per
// bus.
const GrapherLease = "grapher"

// DocumentObject names the text of a document in DocumentBucket.
func DocumentObject(corpus, contentHash string) string { return corpus + "/" + contentHash }
