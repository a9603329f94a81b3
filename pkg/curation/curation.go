package curation

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/errkind"
	"github.com/graphrag/graphrag/pkg/graphstore"
	"github.com/graphrag/graphrag/pkg/normalize"
)

// Action names what an operation does.
type Action string

// The actions of the curation log.
const (
	// Merge folds Entities into Into: their mentions become mentions of Into.
	Merge Action = "merge"
	// Split takes Entity back out of the merge that folded it into another.
	Split Action = "split"
	// Rename gives Entity the name Name (and the key Name normalizes to).
	Rename Action = "rename"
	// SetType gives Entity the type Type.
	SetType Action = "set_type"
	// Pin makes Description the entity's description.
	Pin Action = "pin"
	// DeleteRelationship drops every relationship between Source and Target, both
	// directions.
	DeleteRelationship Action = "delete_relationship"
	// AddRelationship adds a relationship from Source to Target that no passage states.
	AddRelationship Action = "add_relationship"
	// Undo reverts the operation Undoes.
	Undo Action = "undo"
)

// Limits of one operation and of a log.
const (
	MaxOps        = 2000
	maxNameBytes  = 512
	maxTextBytes  = 8192
	maxMergeNames = 50
)

// ErrInvalid is an operation that breaks the rules above (a 400 in the API).
var ErrInvalid = errkind.Public(errkind.Invalid, "invalid curation")

// ErrNotFound is an entity or operation id the corpus does not have (a 404).
var ErrNotFound = errkind.Public(errkind.NotFound, "not found")

// ErrConflict is an undo of an operation already undone, or a log that is full (a 409).
var ErrConflict = errkind.Public(errkind.Conflict, "conflict")

// Op is one curation operation as the API takes it.
type Op struct {
	Action Action `json:"action"`
	// Entities are the entities Merge folds into Into.
	Entities []string `json:"entities,omitempty"`
	Into     string   `json:"into,omitempty"`
	// Entity is the entity of Split, Rename, SetType and Pin.
	Entity      string `json:"entity,omitempty"`
	Name        string `json:"name,omitempty"`
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
	// Source and Target are the ends of DeleteRelationship and AddRelationship.
	Source string `json:"source,omitempty"`
	Target string `json:"target,omitempty"`
	// Strength of an added relationship (0: 1).
	Strength float64 `json:"strength,omitempty"`
	// Undoes is the id of the operation Undo reverts.
	Undoes string `json:"undoes,omitempty"`
}

// Entry is an operation in a corpus's log.
type Entry struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
	Op
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func checkText(field, s string, limit int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return invalid("%s is required", field)
	case len(s) > limit:
		return invalid("%s is %d bytes, limit %d", field, len(s), limit)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return invalid("%s is not valid UTF-8 text", field)
	}
	return nil
}

func checkName(field, s string) error {
	if err := checkText(field, s, maxNameBytes, true); err != nil {
		return err
	}
	if normalize.Name(s) == "" {
		return invalid("%s %q has no letters or digits", field, s)
	}
	return nil
}

// Validate checks an operation's fields (not whether its entities exist: Names lists
// them for the caller to check).
func (o Op) Validate() error {
	switch o.Action {
	case Merge:
		if len(o.Entities) == 0 || len(o.Entities) > maxMergeNames {
			return invalid("merge takes 1 to %d entities, got %d", maxMergeNames, len(o.Entities))
		}
		into := normalize.Name(o.Into)
		if err := checkName("into", o.Into); err != nil {
			return err
		}
		for _, e := range o.Entities {
			if err := checkName("entities", e); err != nil {
				return err
			}
			if normalize.Name(e) == into {
				return invalid("cannot merge %q into itself (%q names the same entity)", e, o.Into)
			}
		}
	case Split, SetType, Pin, Rename:
		if err := checkName("entity", o.Entity); err != nil {
			return err
		}
		switch o.Action {
		case Rename:
			if err := checkName("name", o.Name); err != nil {
				return err
			}
		case SetType:
			if err := checkText("type", o.Type, maxNameBytes, true); err != nil {
				return err
			}
		case Pin:
			if err := checkText("description", o.Description, maxTextBytes, true); err != nil {
				return err
			}
		}
	case DeleteRelationship, AddRelationship:
		if err := checkName("source", o.Source); err != nil {
			return err
		}
		if err := checkName("target", o.Target); err != nil {
			return err
		}
		if normalize.Name(o.Source) == normalize.Name(o.Target) {
			return invalid("a relationship needs two entities: %q and %q are the same", o.Source, o.Target)
		}
		if o.Action == AddRelationship {
			if err := checkText("type", o.Type, maxNameBytes, false); err != nil {
				return err
			}
			if err := checkText("description", o.Description, maxTextBytes, false); err != nil {
				return err
			}
			if !(o.Strength >= 0 && o.Strength <= graphstore.MaxStrength) {
				return invalid("strength %v is outside [0, %g]", o.Strength, graphstore.MaxStrength)
			}
		}
	case Undo:
		if o.Undoes == "" {
			return invalid("undo needs the id of the operation it reverts")
		}
	case "":
		return invalid("action is required (one of merge, split, rename, set_type, pin, delete_relationship, add_relationship)")
	default:
		return invalid("unknown action %q (one of merge, split, rename, set_type, pin, delete_relationship, add_relationship)", o.Action)
	}
	return nil
}

// Names are the entities an operation names that must exist in the curated graph
// before it is accepted: those merged (and merged into), renamed, typed, pinned or split,
// and the ends of a relationship. An added relationship's ends need not exist.
func (o Op) Names() []string {
	switch o.Action {
	case Merge:
		return append(slices.Clone(o.Entities), o.Into)
	case Rename, SetType, Pin:
		return []string{o.Entity}
	case DeleteRelationship:
		return []string{o.Source, o.Target}
	}
	return nil
}

// Effective is the log without the undo entries and the operations they revert, in
// log order.
func Effective(log []Entry) []Entry {
	undone := map[string]bool{}
	for _, e := range log {
		if e.Action == Undo {
			undone[e.Undoes] = true
		}
	}
	var out []Entry
	for _, e := range log {
		if e.Action != Undo && !undone[e.ID] {
			out = append(out, e)
		}
	}
	return out
}

// State is what a log makes of the graph: the function Apply applies to every chunk's
// extraction, so that the graph derived from the extractions is the curated graph.
type State struct {
	// parent links a key to the key it was merged into (or renamed to); a key's
	// canonical key is at the end of its chain.
	parent map[string]string
	// Overrides by canonical key.
	names, types, descs map[string]string
	// dropped holds the unordered canonical pairs whose relationships are deleted.
	dropped map[[2]string]bool
	added   []added
	ops     []Entry
}

type added struct {
	id                    string
	source, target        string // keys
	sourceName, typ, desc string
	targetName            string
	strength              float64
}

// Empty reports whether the state changes nothing.
func (s *State) Empty() bool { return s == nil || len(s.ops) == 0 }

func pair(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Fold computes the state of a log: its effective operations applied in order, but
// those in skip (the inactive ones: see Status).
func Fold(log []Entry, skip map[string]bool) *State {
	s := &State{parent: map[string]string{}, names: map[string]string{}, types: map[string]string{},
		descs: map[string]string{}, dropped: map[[2]string]bool{}}
	type override struct {
		key, value string
	}
	var names, types, descs []override
	var dropped [][2]string
	for _, e := range Effective(log) {
		if skip[e.ID] {
			continue
		}
		s.ops = append(s.ops, e)
		switch e.Action {
		case Merge:
			into := s.Resolve(normalize.Name(e.Into))
			for _, name := range e.Entities {
				if k := s.Resolve(normalize.Name(name)); k != into {
					s.parent[k] = into
				}
			}
		case Split:
			delete(s.parent, normalize.Name(e.Entity))
		case Rename:
			k, n := s.Resolve(normalize.Name(e.Entity)), normalize.Name(e.Name)
			if n != k {
				if s.Resolve(n) == k {
					delete(s.parent, n) // renamed to a key merged into it: that key is the entity now
				}
				s.parent[k] = n
			}
			names = append(names, override{n, e.Name})
		case SetType:
			types = append(types, override{s.Resolve(normalize.Name(e.Entity)), e.Type})
		case Pin:
			descs = append(descs, override{s.Resolve(normalize.Name(e.Entity)), e.Description})
		case DeleteRelationship:
			dropped = append(dropped, [2]string{normalize.Name(e.Source), normalize.Name(e.Target)})
		case AddRelationship:
			s.added = append(s.added, added{id: e.ID, source: normalize.Name(e.Source), target: normalize.Name(e.Target),
				sourceName: e.Source, targetName: e.Target, typ: e.Type, desc: e.Description, strength: e.Strength})
		}
	}
	// Overrides and pairs follow their entities into later merges; of two landing on
	// one entity, the later operation wins.
	for _, o := range names {
		s.names[s.Resolve(o.key)] = o.value
	}
	for _, o := range types {
		s.types[s.Resolve(o.key)] = o.value
	}
	for _, o := range descs {
		s.descs[s.Resolve(o.key)] = o.value
	}
	for _, p := range dropped {
		if a, b := s.Resolve(p[0]), s.Resolve(p[1]); a != b {
			s.dropped[pair(a, b)] = true
		}
	}
	return s
}

// Resolve is the canonical key of a normalized key.
func (s *State) Resolve(key string) string {
	if s == nil {
		return key
	}
	for range len(s.parent) + 1 {
		next, ok := s.parent[key]
		if !ok {
			return key
		}
		key = next
	}
	return key // unreachable: Fold never links a key to itself through a chain
}

// Aliases maps every key merged into another (or renamed) to its canonical key.
func (s *State) Aliases() map[string]string {
	out := map[string]string{}
	if s == nil {
		return out
	}
	for k := range s.parent {
		out[k] = s.Resolve(k)
	}
	return out
}

// chain lists key and every key it was merged into, in order.
func (s *State) chain(key string) []string {
	out := []string{key}
	for range len(s.parent) {
		next, ok := s.parent[key]
		if !ok {
			break
		}
		out = append(out, next)
		key = next
	}
	return out
}

// Keys lists, sorted, every key the state may change a chunk through: keys merged or
// merged into, overridden, or ends of a deleted or added relationship. A chunk the
// state changes mentions one of them.
func (s *State) Keys() []string {
	if s == nil {
		return nil
	}
	set := map[string]bool{}
	for k, v := range s.parent {
		set[k], set[v] = true, true
	}
	for _, m := range []map[string]string{s.names, s.types, s.descs} {
		for k := range m {
			set[k] = true
		}
	}
	for p := range s.dropped {
		set[p[0]], set[p[1]] = true, true
	}
	for _, a := range s.added {
		set[s.Resolve(a.source)], set[s.Resolve(a.target)] = true, true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Apply is a chunk's extraction as the curated graph has it: keys merged into others
// replaced by their canonical keys, renamed, typed and pinned entities given their
// name, type and description (an entity the chunk only implies gets a mention
// carrying them), deleted relationships dropped. ce is not changed.
func (s *State) Apply(ce graphstore.ChunkExtraction) graphstore.ChunkExtraction {
	if s.Empty() {
		return ce
	}
	out := graphstore.ChunkExtraction{ChunkID: ce.ChunkID, DocumentID: ce.DocumentID}
	explicit := map[string]bool{}
	for _, m := range ce.Entities {
		k := s.Resolve(m.Key)
		if n, ok := s.names[k]; ok && m.Name != "" {
			m.Name = n
		} else if k != m.Key {
			// A merged mention adds its type and description, not its surface form:
			// the entity keeps the name of the one it was merged into.
			m.Name = ""
		}
		m.Key = k
		if t, ok := s.types[m.Key]; ok {
			m.Type = t
		}
		if d, ok := s.descs[m.Key]; ok {
			m.Description = d
		}
		explicit[m.Key] = true
		out.Entities = append(out.Entities, m)
	}
	var implied []string
	for _, r := range ce.Relations {
		r.SourceKey, r.TargetKey = s.Resolve(r.SourceKey), s.Resolve(r.TargetKey)
		if r.SourceKey == r.TargetKey || s.dropped[pair(r.SourceKey, r.TargetKey)] {
			continue
		}
		out.Relations = append(out.Relations, r)
		implied = append(implied, r.SourceKey, r.TargetKey)
	}
	for _, k := range implied {
		if explicit[k] {
			continue
		}
		explicit[k] = true
		if m, ok := s.overridden(k); ok {
			out.Entities = append(out.Entities, m)
		}
	}
	return out
}

// overridden is the mention that carries a key's overrides, if it has any.
func (s *State) overridden(k string) (graphstore.EntityMention, bool) {
	n, hasName := s.names[k]
	t, hasType := s.types[k]
	d, hasDesc := s.descs[k]
	return graphstore.EntityMention{Key: k, Name: n, Type: t, Description: d}, hasName || hasType || hasDesc
}

// AddedChunkPrefix begins the ids of the chunks that carry added relationships.
const AddedChunkPrefix = "curation:"

// Added are the chunks that carry the relationships the log adds, one per operation,
// already curated.
func (s *State) Added() []graphstore.ChunkExtraction {
	if s == nil {
		return nil
	}
	out := make([]graphstore.ChunkExtraction, 0, len(s.added))
	for _, a := range s.added {
		ce := graphstore.ChunkExtraction{ChunkID: AddedChunkPrefix + a.id,
			Entities:  []graphstore.EntityMention{{Key: a.source, Name: a.sourceName}, {Key: a.target, Name: a.targetName}},
			Relations: []graphstore.RelationMention{{SourceKey: a.source, TargetKey: a.target, Type: a.typ, Description: a.desc, Strength: a.strength}}}
		out = append(out, s.applyAdded(ce))
	}
	return out
}

// applyAdded curates an added relationship's chunk; a deletion of the pair does not
// remove an addition (undo it instead).
func (s *State) applyAdded(ce graphstore.ChunkExtraction) graphstore.ChunkExtraction {
	dropped := s.dropped
	s.dropped = nil
	defer func() { s.dropped = dropped }()
	return s.Apply(ce)
}

// Status says whether an operation still changes the graph.
type Status struct {
	// Active is false when the entities it names have lost the evidence it acts on
	// (their documents were deleted); it is active again if the evidence returns.
	Active bool `json:"active"`
	// Reason says why it is inactive.
	Reason string `json:"reason,omitempty"`
}

// Status computes every operation's status from the original (uncurated) extractions
// of the chunks that mention the state's keys (Keys): a merge is active while both the
// entities merged and the one merged into have evidence of their own, a rename, type or
// pin while the entity has any, a deleted relationship while some passage still states
// it; an added relationship always is. Compute it on the state of the whole log (Fold
// with no skip); the graph is then curated by the active operations alone (Inactive),
// so a merge whose last evidence on one side is deleted goes away with it and comes
// back with it.
func (s *State) Status(raws []graphstore.ChunkExtraction) map[string]Status {
	out := map[string]Status{}
	if s.Empty() {
		return out
	}
	seen := map[string]bool{}     // raw keys with evidence
	pairs := map[[2]string]bool{} // canonical pairs stated
	for _, ce := range raws {
		for _, m := range ce.Entities {
			seen[m.Key] = true
		}
		for _, r := range ce.Relations {
			seen[r.SourceKey], seen[r.TargetKey] = true, true
			if a, b := s.Resolve(r.SourceKey), s.Resolve(r.TargetKey); a != b {
				pairs[pair(a, b)] = true
			}
		}
	}
	// through reports whether some key with evidence reaches key along its chain
	// without passing any key in not.
	through := func(key string, not map[string]bool) bool {
		for r := range seen {
			for _, k := range s.chain(r) {
				if not[k] {
					break
				}
				if k == key {
					return true
				}
			}
		}
		return false
	}
	for _, e := range s.ops {
		st := Status{Active: true}
		switch e.Action {
		case Merge:
			sources := map[string]bool{}
			evidence := false
			for _, n := range e.Entities {
				sources[normalize.Name(n)] = true
				evidence = evidence || through(normalize.Name(n), nil)
			}
			switch {
			case !evidence:
				st = Status{Reason: fmt.Sprintf("no passage mentions %s any more", quoteList(e.Entities))}
			case !through(normalize.Name(e.Into), sources):
				st = Status{Reason: fmt.Sprintf("no passage mentions %q any more", e.Into)}
			}
		case Split, Rename, SetType, Pin:
			if !through(normalize.Name(e.Entity), nil) {
				st = Status{Reason: fmt.Sprintf("no passage mentions %q any more", e.Entity)}
			}
		case DeleteRelationship:
			if !pairs[pair(s.Resolve(normalize.Name(e.Source)), s.Resolve(normalize.Name(e.Target)))] {
				st = Status{Reason: fmt.Sprintf("no passage relates %q and %q any more", e.Source, e.Target)}
			}
		}
		out[e.ID] = st
	}
	return out
}

// Inactive is the set of ids of the operations a status says are inactive.
func Inactive(st map[string]Status) map[string]bool {
	out := map[string]bool{}
	for id, s := range st {
		if !s.Active {
			out[id] = true
		}
	}
	return out
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// Equal reports whether two extractions are the same (the order of mentions
// included).
func Equal(a, b graphstore.ChunkExtraction) bool {
	return a.ChunkID == b.ChunkID && a.DocumentID == b.DocumentID &&
		slices.Equal(a.Entities, b.Entities) && slices.Equal(a.Relations, b.Relations)
}
