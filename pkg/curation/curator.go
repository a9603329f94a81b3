package curation

import (
	"context"
	"fmt"

	"github.com/graphrag/graphrag/pkg/bus"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
)

// EntityReader is what the Curator reads of the graph: whether the entities an
// operation names exist (a graphstore.Store has it).
type EntityReader interface {
	Entities(ctx context.Context, corpus string, keys []string, opts ...graphstore.ReadOption) ([]graphstore.Entity, error)
}

// Curator takes operations for the API and the CLI: it checks them against the
// curated graph, appends them to the corpus's log and tells the grapher, which
// applies them (asynchronously, like a publication).
type Curator struct {
	KV    bus.KV
	Bus   *bus.Bus
	Graph EntityReader
}

// Apply checks op, appends it to the corpus's log and publishes its event. An entity
// the graph does not have is ErrNotFound, a bad operation ErrInvalid.
func (c *Curator) Apply(ctx context.Context, corpus string, op Op) (Entry, error) {
	if op.Action == Undo {
		return Entry{}, invalid("an undo is not posted: DELETE /v1/corpora/%s/curation/{id} (graphrag curate undo ID) reverts an operation", corpus)
	}
	if err := op.Validate(); err != nil {
		return Entry{}, err
	}
	if err := c.exist(ctx, corpus, op.Names()); err != nil {
		return Entry{}, err
	}
	return c.append(ctx, corpus, op, nil)
}

// Undo appends an entry reverting the operation id.
func (c *Curator) Undo(ctx context.Context, corpus, id string) (Entry, error) {
	check := func(log []Entry) error {
		for _, e := range log {
			if e.Action == Undo && e.Undoes == id {
				return fmt.Errorf("%w: operation %s is already undone (by %s)", ErrConflict, id, e.ID)
			}
		}
		for _, e := range log {
			if e.ID == id {
				if e.Action == Undo {
					return invalid("%s is an undo; an undo cannot be undone (apply the operation again)", id)
				}
				return nil
			}
		}
		return fmt.Errorf("%w: corpus %s has no curation operation %q", ErrNotFound, corpus, id)
	}
	return c.append(ctx, corpus, Op{Action: Undo, Undoes: id}, check)
}

func (c *Curator) append(ctx context.Context, corpus string, op Op, check func([]Entry) error) (Entry, error) {
	e, err := Append(ctx, c.KV, corpus, op, check)
	if err != nil {
		return Entry{}, err
	}
	ev := &events.Curation{Schema: events.SchemaCuration, Corpus: corpus, OpID: e.ID, Action: string(e.Action)}
	data, err := events.Encode(ev)
	if err != nil {
		return Entry{}, err
	}
	// Were this publish lost, the entry would wait in the log for the next one (any
	// later operation applies the whole log).
	if _, err := c.Bus.Publish(ctx, events.Subject(events.KindExtractions, corpus), data, bus.WithMsgID(ev.MsgID())); err != nil {
		return Entry{}, fmt.Errorf("publishing curation %s: %w", e.ID, err)
	}
	return e, nil
}

// exist checks that the curated graph has every named entity.
func (c *Curator) exist(ctx context.Context, corpus string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = normalize.Name(n)
	}
	ents, err := c.Graph.Entities(ctx, corpus, keys, graphstore.Brief)
	if err != nil {
		return fmt.Errorf("reading entities: %w", err)
	}
	have := map[string]bool{}
	for _, e := range ents {
		have[e.Key] = true
	}
	for i, k := range keys {
		if !have[k] {
			return fmt.Errorf("%w: corpus %s has no entity %q", ErrNotFound, corpus, names[i])
		}
	}
	return nil
}

// Report is an entry of the log as the API shows it.
type Report struct {
	Entry
	// State is "pending" (the grapher has not applied it yet), "active", "inactive"
	// (Reason says why) or "undone" (UndoneBy names the undo).
	State    string `json:"state"`
	Reason   string `json:"reason,omitempty"`
	UndoneBy string `json:"undone_by,omitempty"`
}

// Log reports a corpus's log, oldest first, each entry with its state.
func (c *Curator) Log(ctx context.Context, corpus string) ([]Report, error) {
	log, _, err := Load(ctx, c.KV, corpus)
	if err != nil {
		return nil, err
	}
	applied, err := Applied(ctx, c.KV, corpus)
	if err != nil {
		return nil, err
	}
	status, err := LoadStatus(ctx, c.KV, corpus)
	if err != nil {
		return nil, err
	}
	undoneBy := map[string]string{}
	for _, e := range log {
		if e.Action == Undo {
			undoneBy[e.Undoes] = e.ID
		}
	}
	out := make([]Report, len(log))
	for i, e := range log {
		r := Report{Entry: e, State: "active"}
		st, known := status[e.ID]
		switch {
		case undoneBy[e.ID] != "":
			r.State, r.UndoneBy = "undone", undoneBy[e.ID]
		case i >= applied:
			r.State = "pending"
		case e.Action == Undo:
			r.State = "applied"
		case known && !st.Active:
			r.State, r.Reason = "inactive", st.Reason
		}
		out[i] = r
	}
	return out, nil
}
