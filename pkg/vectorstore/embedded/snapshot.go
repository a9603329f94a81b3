package embedded

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
)

// snapshotMagic starts an HNSW snapshot file; the trailing 4 bytes are the
// CRC-32 (Castagnoli) of everything before them. Version 3 holds quantized
// vectors (scale, error bound, one byte per dimension); version 2 held
// float32 vectors and is still read, its vectors quantized on load, so that
// an upgrade does not rebuild every graph. Any other magic is ignored and
// the graph rebuilt.
const (
	snapshotMagic   = "GRVSHNS3"
	snapshotMagicV2 = "GRVSHNS2"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errBadSnapshot marks a snapshot that must be ignored (torn, foreign or
// stale); the graph is then rebuilt from bbolt.
var errBadSnapshot = errors.New("unusable hnsw snapshot")

// snapshotHeader ties a snapshot to one incarnation of a collection.
type snapshotHeader struct {
	Incarnation uint64
	Seq         uint64 // highest record sequence the graph covers
	Dim         uint64
	Nodes       uint64
	Entry       int64
	Top         uint64
}

// Limits that a valid snapshot never exceeds; they keep a damaged file that
// slipped past the checksum from allocating absurd amounts.
const (
	maxSnapshotLevels = 64
	maxSnapshotLinks  = 4096
)

// writeSnapshot writes the graph atomically: temp file, fsync, rename,
// fsync of the directory. Layout after the magic and header, per node: key,
// number of layers, the vector's scale and error bound (float32), its codes,
// then per layer the neighbour count and ids.
func writeSnapshot(path string, h snapshotHeader, g *frozenGraph) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".hnsw-*.tmp")
	if err != nil {
		return fmt.Errorf("creating snapshot file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(tmp, 1<<20)
	w := io.MultiWriter(bw, crc)
	h.Nodes, h.Entry, h.Top = uint64(len(g.keys)), int64(g.entry), uint64(g.top)
	if _, err := io.WriteString(w, snapshotMagic); err != nil {
		return fmt.Errorf("writing snapshot header: %w", err)
	}
	if err := binary.Write(w, binary.LittleEndian, h); err != nil {
		return fmt.Errorf("writing snapshot header: %w", err)
	}
	var buf []byte
	list, at := 0, 0 // next list in g.counts, next link in g.links
	for i, key := range g.keys {
		buf = binary.LittleEndian.AppendUint64(buf[:0], key)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(g.layers[i]))
		v := g.vecs[i]
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v.scale))
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v.err))
		for _, x := range v.codes {
			buf = append(buf, byte(x))
		}
		for range g.layers[i] {
			cnt := int(g.counts[list])
			list++
			buf = binary.LittleEndian.AppendUint32(buf, uint32(cnt))
			for _, n := range g.links[at : at+cnt] {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(n))
			}
			at += cnt
		}
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("writing snapshot: %w", err)
		}
	}
	if err := binary.Write(bw, binary.LittleEndian, crc.Sum32()); err != nil {
		return fmt.Errorf("writing snapshot checksum: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing snapshot: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("syncing snapshot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("installing snapshot: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename or a new file in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening %s to sync: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// readSnapshot loads a snapshot after verifying its checksum, so that a
// damaged file is never decoded, and validates every count and link.
func readSnapshot(path string, cfg config) (h snapshotHeader, g *annGraph, err error) {
	f, err := os.Open(path)
	if err != nil {
		return h, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return h, nil, fmt.Errorf("reading snapshot: %w", err)
	}
	size := st.Size()
	hdrSize := int64(len(snapshotMagic) + binary.Size(h))
	if size < hdrSize+4 {
		return h, nil, fmt.Errorf("%w: %d bytes is too short", errBadSnapshot, size)
	}
	crc := crc32.New(crcTable)
	if _, err := io.Copy(crc, io.NewSectionReader(f, 0, size-4)); err != nil {
		return h, nil, fmt.Errorf("checksumming snapshot: %w", err)
	}
	var want uint32
	if err := binary.Read(io.NewSectionReader(f, size-4, 4), binary.LittleEndian, &want); err != nil {
		return h, nil, fmt.Errorf("reading snapshot checksum: %w", err)
	}
	if crc.Sum32() != want {
		return h, nil, fmt.Errorf("%w: checksum mismatch", errBadSnapshot)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size-4), 1<<20)
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic && string(magic) != snapshotMagicV2 {
		return h, nil, fmt.Errorf("%w: bad magic", errBadSnapshot)
	}
	readVec := readQuantized
	if string(magic) == snapshotMagicV2 {
		readVec = readFloatVec
	}
	if err := binary.Read(r, binary.LittleEndian, &h); err != nil {
		return h, nil, fmt.Errorf("%w: header: %w", errBadSnapshot, err)
	}
	minNode := int64(8 + 4 + 8 + h.Dim)
	if h.Dim == 0 || h.Nodes > uint64((size-hdrSize)/minNode) || h.Top >= maxSnapshotLevels ||
		h.Entry < -1 || h.Entry >= int64(h.Nodes) || (h.Nodes > 0) != (h.Entry >= 0) {
		return h, nil, fmt.Errorf("%w: implausible header %+v", errBadSnapshot, h)
	}
	g = newANNGraph(cfg.hnswM, cfg.efConstruction)
	n := int(h.Nodes)
	g.keys = make([]uint64, n)
	g.vecs = make([]qvec, n)
	g.levels = make([]uint8, 0, n)
	g.entry, g.top = int32(h.Entry), int(h.Top)
	var b4 [4]byte
	u32 := func() (uint32, error) {
		if _, err := io.ReadFull(r, b4[:]); err != nil {
			return 0, err
		}
		return binary.LittleEndian.Uint32(b4[:]), nil
	}
	raw := make([]byte, max(8, 4*h.Dim)) // a v2 vector, or a v3 scale and bound
	codes := make([]int8, n*int(h.Dim))  // one allocation for all nodes
	var nb []int32
	for i := range n {
		var b8 [8]byte
		if _, err := io.ReadFull(r, b8[:]); err != nil {
			return h, nil, fmt.Errorf("%w: node %d: %w", errBadSnapshot, i, err)
		}
		g.keys[i] = binary.LittleEndian.Uint64(b8[:])
		levels, err := u32()
		if err != nil || levels == 0 || levels > uint32(h.Top)+1 {
			return h, nil, fmt.Errorf("%w: node %d: bad layer count", errBadSnapshot, i)
		}
		v, err := readVec(r, raw, codes[i*int(h.Dim):(i+1)*int(h.Dim):(i+1)*int(h.Dim)])
		if err != nil {
			return h, nil, fmt.Errorf("%w: node %d vector: %w", errBadSnapshot, i, err)
		}
		g.vecs[i] = v
		g.addNode(int32(i), int(levels)-1)
		for l := range int(levels) {
			cnt, err := u32()
			// A longer list than this graph's layer holds comes from another M:
			// the store then rebuilds the graph with its own.
			if err != nil || cnt > maxSnapshotLinks || (l == 0 && cnt > uint32(g.m0)) {
				return h, nil, fmt.Errorf("%w: node %d: bad link count", errBadSnapshot, i)
			}
			nb = nb[:0]
			for range cnt {
				x, err := u32()
				if err != nil || x >= uint32(n) {
					return h, nil, fmt.Errorf("%w: node %d: bad link", errBadSnapshot, i)
				}
				nb = append(nb, int32(x))
			}
			g.setNeighbours(int32(i), l, nb)
		}
		if _, dup := g.byKey[g.keys[i]]; dup {
			return h, nil, fmt.Errorf("%w: duplicate key %d", errBadSnapshot, g.keys[i])
		}
		g.byKey[g.keys[i]] = int32(i)
	}
	// A link to a layer its target does not have would panic in a search.
	for i := range n {
		for l := range int(g.levels[i]) + 1 {
			for _, x := range g.neighbours(int32(i), l) {
				if int(g.levels[x]) < l {
					return h, nil, fmt.Errorf("%w: link to a missing layer", errBadSnapshot)
				}
			}
		}
	}
	if n > 0 && int(g.levels[g.entry]) != g.top {
		return h, nil, fmt.Errorf("%w: entry point not on the top layer", errBadSnapshot)
	}
	return h, g, nil
}

// readQuantized reads a version 3 vector: scale, error bound, codes (into
// codes, whose length is the dimension).
func readQuantized(r io.Reader, raw []byte, codes []int8) (qvec, error) {
	hdr := raw[:8]
	if _, err := io.ReadFull(r, hdr); err != nil {
		return qvec{}, err
	}
	v := qvec{
		codes: codes,
		scale: math.Float32frombits(binary.LittleEndian.Uint32(hdr)),
		err:   math.Float32frombits(binary.LittleEndian.Uint32(hdr[4:])),
	}
	if !finite(v.scale) || !finite(v.err) || v.scale < 0 || v.err < 0 {
		return qvec{}, errors.New("bad scale or error bound")
	}
	b := raw[:len(codes)]
	if _, err := io.ReadFull(r, b); err != nil {
		return qvec{}, err
	}
	for j, x := range b {
		codes[j] = int8(x)
	}
	return v, nil
}

// readFloatVec reads a version 2 vector (normalized float32) and quantizes
// it into codes.
func readFloatVec(r io.Reader, raw []byte, codes []int8) (qvec, error) {
	raw = raw[:4*len(codes)]
	if _, err := io.ReadFull(r, raw); err != nil {
		return qvec{}, err
	}
	u := make([]float32, len(codes))
	for j := range u {
		u[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		if !finite(u[j]) {
			return qvec{}, errors.New("non-finite component")
		}
	}
	v := quantizeUnit(u)
	copy(codes, v.codes)
	v.codes = codes
	return v, nil
}

func finite(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }
