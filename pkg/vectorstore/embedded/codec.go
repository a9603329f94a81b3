package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// recordVersion tags the on-disk record encoding.
const recordVersion = 1

// errCorrupt marks an undecodable stored value.
var errCorrupt = errors.New("corrupt stored record")

// storedRecord is a record as kept in bbolt: the original vector (not
// normalized, so Get returns what was written) and its write sequence.
type storedRecord struct {
	seq    uint64
	vector []float32
	text   string
	// textLen is the number of analyzed tokens of text (lexical collections
	// only), kept so that BM25's average length is known without re-analysis.
	textLen uint64
	attrs   map[string]string
}

// encodeRecord lays out: version, seq, dim, floats (LE), text, text length,
// attrs sorted by
// key (deterministic bytes).
func encodeRecord(r storedRecord) []byte {
	n := 1 + 3*binary.MaxVarintLen64 + 4*len(r.vector) + len(r.text)
	for k, v := range r.attrs {
		n += 2*binary.MaxVarintLen64 + len(k) + len(v)
	}
	b := make([]byte, 0, n)
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, r.seq)
	b = binary.AppendUvarint(b, uint64(len(r.vector)))
	for _, x := range r.vector {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	b = appendString(b, r.text)
	b = binary.AppendUvarint(b, r.textLen)
	keys := make([]string, 0, len(r.attrs))
	for k := range r.attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendString(b, k)
		b = appendString(b, r.attrs[k])
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint", errCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: length %d exceeds remaining %d bytes", errCorrupt, n, len(d.b))
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

// decodeRecord parses encodeRecord's output. With skipText the text is not
// copied (the in-memory index does not need it).
func decodeRecord(b []byte, skipText bool) (storedRecord, error) {
	return decodeRecordLean(b, skipText, false)
}

// recordVector decodes an encoded record's vector into dst, whose length
// must be the record's dimension, without allocating: re-ranking reads a
// few hundred vectors per search.
func recordVector(b []byte, dst []float32) error {
	if len(b) == 0 || b[0] != recordVersion {
		return fmt.Errorf("%w: unknown version", errCorrupt)
	}
	d := decoder{b: b[1:]}
	d.uvarint() // seq
	dim := d.uvarint()
	if d.err == nil && dim != uint64(len(dst)) {
		return fmt.Errorf("%w: dimension %d, want %d", errCorrupt, dim, len(dst))
	}
	raw := d.bytes(4 * dim)
	if d.err != nil {
		return d.err
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return nil
}

// decodeRecordLean is decodeRecord that can also leave the vector out (nil):
// an open that finds a record's normalized vector in the HNSW snapshot
// would only make garbage of it (1.5 KB per 384-d record).
func decodeRecordLean(b []byte, skipText, skipVector bool) (storedRecord, error) {
	return decodeRecordParts(b, skipText, skipVector, false)
}

// decodeRecordParts is decodeRecordLean that can also leave the attributes
// out (nil), for an open that reads them with decodeAttrSet.
func decodeRecordParts(b []byte, skipText, skipVector, skipAttrs bool) (storedRecord, error) {
	var r storedRecord
	if len(b) == 0 || b[0] != recordVersion {
		return r, fmt.Errorf("%w: unknown version", errCorrupt)
	}
	d := decoder{b: b[1:]}
	r.seq = d.uvarint()
	dim := d.uvarint()
	if d.err == nil && dim > uint64(len(d.b))/4 {
		return r, fmt.Errorf("%w: dimension %d exceeds data", errCorrupt, dim)
	}
	raw := d.bytes(4 * dim)
	if d.err == nil && !skipVector {
		r.vector = make([]float32, dim)
		for i := range r.vector {
			r.vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	tb := d.bytes(d.uvarint())
	if !skipText {
		r.text = string(tb)
	}
	r.textLen = d.uvarint()
	na := d.uvarint()
	if d.err == nil && na > uint64(len(d.b))/2 {
		return r, fmt.Errorf("%w: %d attributes exceed data", errCorrupt, na)
	}
	if d.err == nil && skipAttrs {
		for i := uint64(0); i < 2*na && d.err == nil; i++ {
			d.bytes(d.uvarint())
		}
	}
	if d.err == nil && na > 0 && !skipAttrs {
		r.attrs = make(map[string]string, na)
		for i := uint64(0); i < na && d.err == nil; i++ {
			k := d.string()
			r.attrs[k] = d.string()
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	if d.err != nil {
		return storedRecord{}, d.err
	}
	return r, nil
}

// entryVersion tags the encoding of an open-index entry.
const entryVersion = 1

// openEntry is what an open needs of a record besides its vector and text:
// the open index (bucketOpen) holds it per record ID.
type openEntry struct {
	seq     uint64
	textLen uint64
	attrs   attrSet
}

// recordEntry derives a record's open-index entry from the record's
// encoding: version, seq, then the record's own bytes from the text length
// on (text length, attributes), so the two cannot encode differently.
func recordEntry(rec []byte) ([]byte, error) {
	if len(rec) == 0 || rec[0] != recordVersion {
		return nil, fmt.Errorf("%w: unknown version", errCorrupt)
	}
	d := decoder{b: rec[1:]}
	d.uvarint() // seq
	seqEnd := len(rec) - len(d.b)
	dim := d.uvarint()
	if d.err == nil && dim > uint64(len(d.b))/4 {
		return nil, fmt.Errorf("%w: dimension %d exceeds data", errCorrupt, dim)
	}
	d.bytes(4 * dim)
	d.bytes(d.uvarint()) // text
	if d.err != nil {
		return nil, d.err
	}
	tail := rec[len(rec)-len(d.b):]
	out := make([]byte, 0, seqEnd+len(tail))
	out = append(out, entryVersion)
	out = append(out, rec[1:seqEnd]...)
	return append(out, tail...), nil
}

// decodeEntry parses recordEntry's output, reading the attributes straight
// into an attrSet: an open does this for every record, and a map and a
// string per value would only be garbage.
func decodeEntry(b []byte, in attrInterner) (openEntry, error) {
	if len(b) == 0 || b[0] != entryVersion {
		return openEntry{}, fmt.Errorf("%w: unknown entry version", errCorrupt)
	}
	d := decoder{b: b[1:]}
	e := openEntry{seq: d.uvarint(), textLen: d.uvarint()}
	attrs, err := d.attrSet(in)
	if err != nil {
		return openEntry{}, err
	}
	e.attrs = attrs
	return e, nil
}

// entryAttrs decodes the attributes of an open-index entry into a map.
func entryAttrs(b []byte) (map[string]string, error) {
	if len(b) == 0 || b[0] != entryVersion {
		return nil, fmt.Errorf("%w: unknown entry version", errCorrupt)
	}
	d := decoder{b: b[1:]}
	d.uvarint() // seq
	d.uvarint() // text length
	na := d.uvarint()
	if d.err == nil && na > uint64(len(d.b))/2 {
		return nil, fmt.Errorf("%w: %d attributes exceed data", errCorrupt, na)
	}
	out := make(map[string]string, na)
	for i := uint64(0); i < na && d.err == nil; i++ {
		k := d.string()
		out[k] = d.string()
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}

// attrSet reads the attributes that end an encoding (encodeRecord sorts
// them by key) and checks that nothing follows.
func (d *decoder) attrSet(in attrInterner) (attrSet, error) {
	na := d.uvarint()
	if d.err == nil && na > uint64(len(d.b))/2 {
		return attrSet{}, fmt.Errorf("%w: %d attributes exceed data", errCorrupt, na)
	}
	var keys, vals [][]byte
	if d.err == nil && na > 0 {
		keys, vals = make([][]byte, 0, na), make([][]byte, 0, na)
	}
	for i := uint64(0); i < na && d.err == nil; i++ {
		keys = append(keys, d.bytes(d.uvarint()))
		vals = append(vals, d.bytes(d.uvarint()))
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	if d.err != nil {
		return attrSet{}, d.err
	}
	if na == 0 {
		return attrSet{}, nil
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			// Not written by encodeRecord: as decodeRecord, the last
			// occurrence of a key wins.
			m := make(map[string]string, len(keys))
			for j, k := range keys {
				m[string(k)] = string(vals[j])
			}
			return compactAttrs(m, in), nil
		}
	}
	return buildAttrs(keys, vals, in), nil
}

// seqKey is the big-endian key of a sequence number (sorted by bbolt).
func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }
