package export

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Sink receives the files of an export.
type Sink interface {
	// Create starts a file; the export writes it whole and closes it before the next.
	Create(name string) (io.WriteCloser, error)
}

// Dir writes the files into a directory, creating it if needed.
func Dir(path string) Sink { return dirSink(path) }

type dirSink string

func (d dirSink) Create(name string) (io.WriteCloser, error) {
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", d, err)
	}
	f, err := os.Create(filepath.Join(string(d), name))
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", name, err)
	}
	return f, nil
}

// ZipSink writes the files into a zip archive streamed to a writer; Close finishes it.
type ZipSink struct {
	zw *zip.Writer
	at time.Time
}

// Zip returns a sink writing a zip archive to w.
func Zip(w io.Writer) *ZipSink { return &ZipSink{zw: zip.NewWriter(w), at: time.Now()} }

// Create implements Sink.
func (z *ZipSink) Create(name string) (io.WriteCloser, error) {
	w, err := z.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: z.at})
	if err != nil {
		return nil, fmt.Errorf("adding %s to the archive: %w", name, err)
	}
	return nopCloser{w}, nil
}

// Close writes the archive's directory.
func (z *ZipSink) Close() error {
	if err := z.zw.Close(); err != nil {
		return fmt.Errorf("finishing the archive: %w", err)
	}
	return nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
