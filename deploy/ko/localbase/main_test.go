package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func TestImageIsReproducibleAndNonroot(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	a, err := Image(ca, "amd64")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Image(ca, "amd64")
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("digests differ between two builds: %s %s", da, db)
	}
	other, err := Image(append([]byte("x"), ca...), "amd64")
	if err != nil {
		t.Fatal(err)
	}
	if do, _ := other.Digest(); do == da {
		t.Error("a different CA bundle gives the same digest")
	}
	cf, err := a.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config user %q os %q arch %q", cf.Config.User, cf.OS, cf.Architecture)
	}
	files := layerFiles(t, a)
	tests := []struct {
		path string
		want string // substring of the content; "" for directories
		mode int64
	}{
		{"etc/passwd", "nonroot:x:65532:65532:", 0o644},
		{"etc/group", "nonroot:x:65532:", 0o644},
		{"etc/ssl/certs/ca-certificates.crt", "BEGIN CERTIFICATE", 0o644},
		{"tmp/", "", 0o1777},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f, ok := files[tt.path]
			if !ok {
				t.Fatalf("missing; have %v", keys(files))
			}
			if f.mode != tt.mode {
				t.Errorf("mode %o, want %o", f.mode, tt.mode)
			}
			if !strings.Contains(f.body, tt.want) {
				t.Errorf("content %q lacks %q", f.body, tt.want)
			}
		})
	}
}

func TestImageRejectsEmptyBundle(t *testing.T) {
	if _, err := Image(nil, "amd64"); err == nil {
		t.Fatal("no error for an empty CA bundle")
	}
}

// TestWriteIsWhatKoReads writes into a fresh cache twice and reads the image back by the
// printed digest from the OCI layout, which is the lookup ko's cache does.
func TestWriteIsWhatKoReads(t *testing.T) {
	img, err := Image([]byte("pem"), "arm64")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "img")
	ref1, err := Write(dir, img, "arm64")
	if err != nil {
		t.Fatal(err)
	}
	ref2, err := Write(dir, img, "arm64")
	if err != nil {
		t.Fatal(err)
	}
	if ref1 != ref2 {
		t.Errorf("refs differ: %s %s", ref1, ref2)
	}
	dig, err := name.NewDigest(ref1)
	if err != nil {
		t.Fatalf("ko cannot parse %q: %v", ref1, err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := v1.NewHash(dig.DigestStr())
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Image(h)
	if err != nil {
		t.Fatalf("image %s not in the layout: %v", h, err)
	}
	if _, err := got.Layers(); err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Errorf("%d manifests after writing the same image twice, want 1", len(m.Manifests))
	}
}

func TestRunNeedsCache(t *testing.T) {
	t.Setenv("KOCACHE", "")
	err := run(nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cache") {
		t.Errorf("err = %v, want a missing cache error", err)
	}
	var out bytes.Buffer
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := writeFile(ca, "pem"); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-cache", dir, "-ca-bundle", ca, "-arch", "amd64"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), RefName+"@sha256:") {
		t.Errorf("printed %q", out.String())
	}
}

type file struct {
	mode int64
	body string
}

func layerFiles(t *testing.T, img v1.Image) map[string]file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v, %d", err, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = file{h.Mode, string(b)}
	}
}

func keys(m map[string]file) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
