package vectorstore

import (
	"context"
	"errors"
)

// Refused is a record a store refused as invalid (ErrInvalidArgument): a zero vector,
// an empty ID, a text or attribute the backend cannot hold.
type Refused struct {
	ID  string
	Err error
}

// Upserter is the part of a Store that UpsertValid uses.
type Upserter interface {
	Upsert(ctx context.Context, coll string, recs []Record) error
}

// UpsertValid upserts recs and returns the records the store refused as invalid
// instead of failing the whole batch for them: no single record can stop a writer.
// Upsert is all or nothing, so a batch refused with ErrInvalidArgument is split in
// halves and each half upserted again, down to the single records to blame (one bad
// record in 4,096 costs about 24 more writes). Any other error (the store unavailable,
// ErrDimensionMismatch: the collection and the embedder disagree) is returned as is:
// it is not a record's fault, and the caller retries. Records written before it stay
// written; an upsert is idempotent.
func UpsertValid(ctx context.Context, s Upserter, coll string, recs []Record) ([]Refused, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	err := s.Upsert(ctx, coll, recs)
	if err == nil || !errors.Is(err, ErrInvalidArgument) {
		return nil, err
	}
	if len(recs) == 1 {
		return []Refused{{ID: recs[0].ID, Err: err}}, nil
	}
	mid := len(recs) / 2
	left, err := UpsertValid(ctx, s, coll, recs[:mid])
	if err != nil {
		return nil, err
	}
	right, err := UpsertValid(ctx, s, coll, recs[mid:])
	if err != nil {
		return nil, err
	}
	return append(left, right...), nil
}
