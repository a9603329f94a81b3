package vectorstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/graphrag/graphrag/pkg/errkind"
)

// Record is one stored item: a primary key, a dense vector, an optional text
// (indexed with BM25 in lexical collections) and string attributes (a JSON
// field in Milvus).
type Record struct {
	ID     string
	Vector []float32
	Text   string
	Attrs  map[string]string
}

// Hit is a search result. Score is the cosine similarity for dense search and
// the BM25 score for lexical search; higher is better.
type Hit struct {
	Record
	Score float64
}

// Filter restricts a search. IDs and Attrs are combined with AND; an empty
// IDs list or Attrs map does not restrict. The zero value means no filter.
type Filter struct {
	// IDs restricts the search to these primary keys.
	IDs []string
	// Attrs requires every key to be present with exactly this value.
	Attrs map[string]string
}

// IsZero reports whether f does not restrict anything.
func (f Filter) IsZero() bool { return len(f.IDs) == 0 && len(f.Attrs) == 0 }

// MatchAttrs reports whether attrs satisfy the attribute part of f.
func (f Filter) MatchAttrs(attrs map[string]string) bool {
	for k, v := range f.Attrs {
		got, ok := attrs[k]
		if !ok || got != v {
			return false
		}
	}
	return true
}

// CollectionSpec describes a collection. Dim is the vector length; Lexical
// asks for a BM25 index over Record.Text.
type CollectionSpec struct {
	Name    string
	Dim     int
	Lexical bool
}

// Store is a vector database. Implementations are safe for concurrent use.
type Store interface {
	// EnsureCollection creates the collection or checks that the existing one
	// is compatible: a different Dim gives ErrDimensionMismatch, asking for
	// Lexical on a collection created without it gives ErrUnsupported.
	EnsureCollection(ctx context.Context, spec CollectionSpec) error
	// Upsert inserts or replaces records, all or nothing. Every vector must
	// have the collection's Dim (ErrDimensionMismatch) and a non-zero norm.
	Upsert(ctx context.Context, coll string, recs []Record) error
	// Get returns the records found, in the order of ids; missing ids are
	// skipped.
	Get(ctx context.Context, coll string, ids []string) ([]Record, error)
	// Attrs returns the attributes of the records found, by ID (an empty map
	// for a record without any); missing ids are absent. It reads neither
	// vectors nor texts: callers that need only attributes, or whether a
	// record exists, use it instead of Get.
	Attrs(ctx context.Context, coll string, ids []string) (map[string]map[string]string, error)
	// Delete removes the records; unknown ids are ignored.
	Delete(ctx context.Context, coll string, ids []string) error
	// Search returns up to k records nearest to vec by cosine similarity,
	// best first, ties broken by ID ascending.
	Search(ctx context.Context, coll string, vec []float32, k int, f Filter) ([]Hit, error)
	// SearchText returns up to k records ranked by BM25 over their text, best
	// first, ties broken by ID ascending. ErrUnsupported if the collection is
	// not Lexical.
	SearchText(ctx context.Context, coll string, query string, k int, f Filter) ([]Hit, error)
	// Count returns the number of records in the collection.
	Count(ctx context.Context, coll string) (int, error)
	// List enumerates the collection: the IDs after the cursor after (""
	// starts at the beginning) in ascending byte order, at most limit of
	// them (limit >= 1, else ErrInvalidArgument), and next, the cursor of
	// the following page: the last ID returned when more may follow, ""
	// at the end. A driver may return fewer than limit IDs before the end,
	// so callers page until next is "". An ID present for the whole
	// listing appears exactly once; one written or deleted meanwhile may
	// or may not. Unlike Search, List has no cap: it is how a caller reads
	// every ID of a collection of any size.
	List(ctx context.Context, coll, after string, limit int) (ids []string, next string, err error)
	// DropCollection removes the collection and its records.
	DropCollection(ctx context.Context, coll string) error
	// Collections lists the collection names, sorted.
	Collections(ctx context.Context) ([]string, error)
	// Ping checks that the store is usable.
	Ping(ctx context.Context) error
	// Close releases resources; calling it twice is safe.
	Close() error
}

// Dependency names the vector store in an error of a driver that finds its server
// unavailable (errkind.Down): what the HTTP API and status may say is down.
const Dependency = "vector store"

// Sentinel errors. Drivers wrap them (errors.Is works) and translate backend
// errors to them at the boundary.
var (
	// ErrNotFound: the collection does not exist.
	ErrNotFound = errkind.New(errkind.NotFound, "vectorstore: collection not found")
	// ErrDimensionMismatch: a vector or a spec disagrees with the collection's dimension.
	ErrDimensionMismatch = errkind.New(errkind.Invalid, "vectorstore: dimension mismatch")
	// ErrUnsupported: the collection or driver does not support the operation.
	ErrUnsupported = errors.New("vectorstore: unsupported")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("vectorstore: store closed")
	// ErrInvalidArgument: a name, id, vector or k is malformed.
	ErrInvalidArgument = errkind.New(errkind.Invalid, "vectorstore: invalid argument")
)

// MaxNameLen is the longest accepted collection name (Milvus' limit).
const MaxNameLen = 255

// ValidateCollectionName checks the name against the rules Milvus applies
// (a letter or underscore, then letters, digits and underscores), so that
// every driver accepts the same names.
func ValidateCollectionName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("%w: collection name %q must have 1 to %d characters", ErrInvalidArgument, name, MaxNameLen)
	}
	for i, r := range name {
		ok := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (i > 0 && '0' <= r && r <= '9')
		if !ok {
			return fmt.Errorf("%w: collection name %q: only letters, digits and '_' are allowed, not starting with a digit", ErrInvalidArgument, name)
		}
	}
	return nil
}

// ValidateSpec checks a collection spec.
func ValidateSpec(spec CollectionSpec) error {
	if err := ValidateCollectionName(spec.Name); err != nil {
		return err
	}
	if spec.Dim < 1 {
		return fmt.Errorf("%w: collection %q: dimension %d must be positive", ErrInvalidArgument, spec.Name, spec.Dim)
	}
	return nil
}

// ValidateVector checks that v has dim finite components and a non-zero
// norm (cosine similarity is undefined for the zero vector).
func ValidateVector(v []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("%w: vector has %d components, collection has %d", ErrDimensionMismatch, len(v), dim)
	}
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: vector has a non-finite component", ErrInvalidArgument)
		}
		sum += f * f
	}
	if sum == 0 {
		return fmt.Errorf("%w: vector has zero norm", ErrInvalidArgument)
	}
	return nil
}

// ValidateRecords checks a batch before an upsert.
func ValidateRecords(recs []Record, dim int) error {
	for i, r := range recs {
		if r.ID == "" {
			return fmt.Errorf("%w: record %d has an empty ID", ErrInvalidArgument, i)
		}
		if err := ValidateVector(r.Vector, dim); err != nil {
			return fmt.Errorf("record %q: %w", r.ID, err)
		}
	}
	return nil
}

// ValidateK checks the number of results asked for.
func ValidateK(k int) error {
	if k < 1 {
		return fmt.Errorf("%w: k must be at least 1, got %d", ErrInvalidArgument, k)
	}
	return nil
}

// ValidateLimit checks the page size asked of List.
func ValidateLimit(limit int) error {
	if limit < 1 {
		return fmt.Errorf("%w: limit must be at least 1, got %d", ErrInvalidArgument, limit)
	}
	return nil
}

// CompareHits orders hits best first: higher score, then ID ascending. Every
// driver sorts with it so that ties are broken identically.
func CompareHits(a, b Hit) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.ID, b.ID)
}

// SortHits sorts hits best first with CompareHits.
func SortHits(hits []Hit) { slices.SortFunc(hits, CompareHits) }
