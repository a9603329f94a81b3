package embedded

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/coder/hnsw"
)

// snapshotMagic starts an HNSW snapshot file; the trailing 4 bytes are the
// CRC-32 (Castagnoli) of everything before them.
const snapshotMagic = "GRVSHNS1"

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errBadSnapshot marks a snapshot that must be ignored (torn, foreign or
// stale); the graph is then rebuilt from bbolt.
var errBadSnapshot = errors.New("unusable hnsw snapshot")

// snapshotHeader ties a snapshot to one incarnation of a collection.
type snapshotHeader struct {
	Incarnation uint64
	Seq         uint64 // highest record sequence the graph covers
	Dim         uint64
}

// writeSnapshot writes the graph atomically: temp file, fsync, rename,
// fsync of the directory.
func writeSnapshot(path string, h snapshotHeader, g *hnsw.Graph[uint64]) (err error) {
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
	if _, err := io.WriteString(w, snapshotMagic); err != nil {
		return fmt.Errorf("writing snapshot header: %w", err)
	}
	if err := binary.Write(w, binary.LittleEndian, h); err != nil {
		return fmt.Errorf("writing snapshot header: %w", err)
	}
	if err := g.Export(w); err != nil {
		return fmt.Errorf("exporting hnsw graph: %w", err)
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
// damaged file is never decoded.
func readSnapshot(path string, cfg config) (h snapshotHeader, g *hnsw.Graph[uint64], err error) {
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
	if size < int64(len(snapshotMagic))+24+4 {
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
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapshotMagic {
		return h, nil, fmt.Errorf("%w: bad magic", errBadSnapshot)
	}
	if err := binary.Read(r, binary.LittleEndian, &h); err != nil {
		return h, nil, fmt.Errorf("%w: header: %v", errBadSnapshot, err)
	}
	g = newGraph(cfg)
	if err := importGraph(g, r); err != nil {
		return h, nil, fmt.Errorf("%w: %v", errBadSnapshot, err)
	}
	// Import restores the saved parameters; use the configured ones.
	g.M, g.EfSearch, g.Distance = cfg.hnswM, cfg.efSearch, unitCosineDistance
	return h, g, nil
}

// importGraph guards against panics in the decoder of a checksummed but
// otherwise unexpected file (e.g. written by another library version).
func importGraph(g *hnsw.Graph[uint64], r io.Reader) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("importing hnsw graph panicked: %v", p)
		}
	}()
	return g.Import(r)
}
