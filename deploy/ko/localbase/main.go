package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// RefName is the repository part of the printed reference; ko looks the base up in its
// cache by digest only, so the name just has to parse and say where the image came from.
const RefName = "localhost/graphrag-static"

// NonrootUID is the user of distroless's nonroot images and of the manifests' runAsUser.
const NonrootUID = 65532

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "localbase:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("localbase", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cache := fs.String("cache", os.Getenv("KOCACHE"), "ko cache directory ($KOCACHE); the image goes into its img/ OCI layout")
	ca := fs.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "PEM CA bundle copied into the image")
	arch := fs.String("arch", runtime.GOARCH, "image architecture (linux only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cache == "" {
		return errors.New("no cache directory: set -cache or KOCACHE")
	}
	certs, err := os.ReadFile(*ca)
	if err != nil {
		return fmt.Errorf("reading the CA bundle: %w", err)
	}
	img, err := Image(certs, *arch)
	if err != nil {
		return err
	}
	ref, err := Write(filepath.Join(*cache, "img"), img, *arch)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, ref)
	return err
}

type entry struct {
	name string
	mode int64
	body []byte // nil for a directory
}

// Image builds the base image: one reproducible layer and a config running as nonroot.
func Image(caBundle []byte, arch string) (v1.Image, error) {
	if len(caBundle) == 0 {
		return nil, errors.New("building the base image: empty CA bundle")
	}
	entries := []entry{
		{"etc/", 0o755, nil},
		{"etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonrootUID))},
		{"etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonrootUID, NonrootUID))},
		{"etc/ssl/", 0o755, nil},
		{"etc/ssl/certs/", 0o755, nil},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, caBundle},
		{"home/", 0o755, nil},
		{"home/nonroot/", 0o700, nil},
		{"tmp/", 0o1777, nil},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeDir}
		if e.body != nil {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.body))
		}
		if e.name == "home/nonroot/" {
			h.Uid, h.Gid = NonrootUID, NonrootUID
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("building the base layer: %w", err)
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, fmt.Errorf("building the base layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("building the base layer: %w", err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, fmt.Errorf("building the base layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("building the base image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("building the base image: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: epoch}
	cf.Config.User = fmt.Sprintf("%d", NonrootUID)
	cf.Config.WorkingDir = "/home/nonroot"
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("building the base image: %w", err)
	}
	return img, nil
}

// Write appends img to the OCI layout at dir (created when absent) unless it is there
// already, and returns the digest reference ko takes as its base image.
func Write(dir string, img v1.Image, arch string) (string, error) {
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("hashing the base image: %w", err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return "", fmt.Errorf("creating the OCI layout %s: %w", dir, err)
		}
	}
	if _, err := p.Image(d); err != nil { // not there yet
		if err := p.AppendImage(img, layout.WithPlatform(v1.Platform{OS: "linux", Architecture: arch})); err != nil {
			return "", fmt.Errorf("writing the base image to %s: %w", dir, err)
		}
	}
	return RefName + "@" + d.String(), nil
}
