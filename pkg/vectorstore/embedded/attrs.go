package embedded

import "sort"

// attrInlineMax is the longest attribute value kept in memory. Filters
// compare short values (a report level, a document ID); the long ones
// (a report's JSON, alias lists, titles) were most of the attribute heap
// and are read from bbolt in the rare filter that names one.
const attrInlineMax = 64

// attrSet is a record's attributes as memory keeps them for filtering:
// key, value, key, value… sorted by key in one slice, the short values
// sharing one string. Bit i of long marks pair i's value as left in bbolt
// (long); pairs past the 64th always stay in memory.
type attrSet struct {
	kv   []string
	long uint64
}

// attrInterner shares attribute keys between records: a collection uses a
// handful of keys, each repeated in every record. Used by writers only.
type attrInterner map[string]string

func internKey[S string | []byte](in attrInterner, k S) string {
	if s, ok := in[string(k)]; ok { // no allocation for a []byte key
		return s
	}
	s := string(k)
	in[s] = s
	return s
}

// compactAttrs builds the attrSet of a.
func compactAttrs(a map[string]string, in attrInterner) attrSet {
	if len(a) == 0 {
		return attrSet{}
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = a[k]
	}
	return buildAttrs(keys, vals, in)
}

// buildAttrs builds an attrSet from pairs sorted by key, copying the short
// values into one string so that no caller's string or decoded buffer
// stays alive.
func buildAttrs[S string | []byte](keys, vals []S, in attrInterner) attrSet {
	size := 0
	for _, v := range vals {
		if len(v) <= attrInlineMax {
			size += len(v)
		}
	}
	buf := make([]byte, 0, size)
	for _, v := range vals {
		if len(v) <= attrInlineMax {
			buf = append(buf, v...)
		}
	}
	blob := string(buf)
	s := attrSet{kv: make([]string, 0, 2*len(keys))}
	at := 0
	for i, k := range keys {
		v := vals[i]
		switch {
		case len(v) <= attrInlineMax:
			s.kv = append(s.kv, internKey(in, k), blob[at:at+len(v)])
			at += len(v)
		case i < 64:
			s.long |= 1 << i
			s.kv = append(s.kv, internKey(in, k), "")
		default: // past the 64th pair: kept whole
			s.kv = append(s.kv, internKey(in, k), string(v))
		}
	}
	return s
}

// attrMatch is whether a record's attribute key equals want.
type attrMatch int

const (
	attrNo    attrMatch = iota
	attrYes             // decided from memory
	attrCheck           // the value is in bbolt only and may equal want
)

// match compares the attribute key with want from memory where it can: a
// long value cannot equal a short want.
func (s attrSet) match(key, want string) attrMatch {
	n := len(s.kv) / 2
	i := sort.Search(n, func(i int) bool { return s.kv[2*i] >= key })
	if i == n || s.kv[2*i] != key {
		return attrNo
	}
	if i < 64 && s.long&(1<<i) != 0 {
		if len(want) <= attrInlineMax {
			return attrNo
		}
		return attrCheck
	}
	if s.kv[2*i+1] == want {
		return attrYes
	}
	return attrNo
}

// attrFilter matches docs against a search's attribute filter, reading a
// long value from bbolt (check) only when memory cannot decide. The first
// read error stops matching and is kept in err.
type attrFilter struct {
	want  map[string]string
	check func(id, key, want string) (bool, error)
	err   error
}

func (f *attrFilter) match(d *doc) bool {
	if f.err != nil {
		return false
	}
	for key, v := range f.want {
		switch d.attrs.match(key, v) {
		case attrNo:
			return false
		case attrCheck:
			ok, err := f.check(d.id, key, v)
			if err != nil {
				f.err = err
				return false
			}
			if !ok {
				return false
			}
		}
	}
	return true
}
