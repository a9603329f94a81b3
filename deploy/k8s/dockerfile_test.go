package k8s

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dockerfiles are the image definitions, by the image repository the manifests use.
var dockerfiles = map[string]string{
	"ghcr.io/graphrag/extractor":  "../../services/extractor/Dockerfile",
	"ghcr.io/graphrag/grapher":    "../../services/grapher/Dockerfile",
	"ghcr.io/graphrag/summarizer": "../../services/summarizer/Dockerfile",
	"ghcr.io/graphrag/query":      "../../services/query/Dockerfile",
	"ghcr.io/graphrag/graphrag":   "../../cmd/graphrag/Dockerfile",
}

var (
	fromRE       = regexp.MustCompile(`(?m)^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?\s*$`)
	userRE       = regexp.MustCompile(`(?m)^USER\s+(\S+)\s*$`)
	buildRE      = regexp.MustCompile(`go build .*-o (/out/\S+) (\./\S+)`)
	entrypointRE = regexp.MustCompile(`(?m)^ENTRYPOINT \["([^"]+)"`)
	copyBinRE    = regexp.MustCompile(`(?m)^COPY --from=build (/out/\S+) (\S+)\s*$`)
)

// TestDockerfiles checks what the manifests assume of the images: a static build
// (CGO_ENABLED=0) of a package that exists, a pinned distroless or scratch final stage, a
// numeric non-root user that matches runAsUser, and an entrypoint that is the binary built.
// No Docker engine runs here: the build itself is exercised by `go build` in CI.
func TestDockerfiles(t *testing.T) {
	for repo, path := range dockerfiles {
		t.Run(repo, func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			froms := fromRE.FindAllStringSubmatch(src, -1)
			if len(froms) < 2 {
				t.Fatalf("want a multi-stage build, got %d FROM lines", len(froms))
			}
			final := froms[len(froms)-1][1]
			if !strings.HasPrefix(final, "gcr.io/distroless/static") && final != "scratch" {
				t.Errorf("final stage %s: want distroless static or scratch", final)
			}
			for _, f := range froms {
				img := f[1]
				if img == "scratch" {
					continue
				}
				if _, tag, ok := strings.Cut(img[strings.LastIndex(img, "/")+1:], ":"); !ok || tag == "" || tag == "latest" {
					if !strings.Contains(img, "@sha256:") {
						t.Errorf("base image %s is not pinned", img)
					}
				}
			}
			if !strings.Contains(src, "CGO_ENABLED=0") {
				t.Error("no CGO_ENABLED=0: the binary must be static for distroless/static")
			}
			users := userRE.FindAllStringSubmatch(src, -1)
			if len(users) == 0 || users[len(users)-1][1] != "65532:65532" {
				t.Errorf("USER %v: want 65532:65532 (runAsUser in the manifests)", users)
			}
			m := buildRE.FindStringSubmatch(src)
			if m == nil {
				t.Fatal("no go build -o /out/... ./package line")
			}
			out, pkg := m[1], m[2]
			if fi, err := os.Stat(filepath.Join("../..", pkg, "main.go")); err != nil || fi.IsDir() {
				t.Errorf("go build target %s has no main.go: %v", pkg, err)
			}
			cp := copyBinRE.FindStringSubmatch(src)
			if cp == nil || cp[1] != out {
				t.Fatalf("final stage does not copy %s: %v", out, cp)
			}
			ep := entrypointRE.FindStringSubmatch(src)
			if ep == nil || ep[1] != cp[2] {
				t.Errorf("ENTRYPOINT %v is not the copied binary %s", ep, cp[2])
			}
			if _, err := os.Stat(path + ".dockerignore"); err != nil {
				t.Errorf("no %s.dockerignore: the context is the repository root", filepath.Base(path))
			}
		})
	}
}

// TestEveryImageHasADockerfile ties the manifests' images to the Dockerfiles above.
func TestEveryImageHasADockerfile(t *testing.T) {
	for _, overlay := range []string{"overlays/dev", "overlays/production"} {
		objs, err := Render(overlay)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			for _, m := range regexp.MustCompile(`"image":"([^"]+)"`).FindAllStringSubmatch(string(o.JSON), -1) {
				repo := imageRepo(m[1])
				if !strings.HasPrefix(repo, "ghcr.io/graphrag/") {
					continue // third-party images (nats) come from their publishers
				}
				if _, ok := dockerfiles[repo]; !ok {
					t.Errorf("%s uses %s, which no Dockerfile builds", o.ID(), repo)
				}
			}
		}
	}
}
