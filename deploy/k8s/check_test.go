package k8s

import (
	"strings"
	"testing"
)

func TestImageRepo(t *testing.T) {
	tests := []struct{ image, want string }{
		{"ghcr.io/graphrag/extractor:0.1.0", "ghcr.io/graphrag/extractor"},
		{"ghcr.io/graphrag/extractor", "ghcr.io/graphrag/extractor"},
		{"ghcr.io/graphrag/extractor@sha256:abc", "ghcr.io/graphrag/extractor"},
		{"ghcr.io/graphrag/extractor:0.1.0@sha256:abc", "ghcr.io/graphrag/extractor"},
		{"localhost:5000/extractor:1", "localhost:5000/extractor"},
		{"localhost:5000/extractor", "localhost:5000/extractor"},
		{"nats", "nats"},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			if got := imageRepo(tt.image); got != tt.want {
				t.Errorf("imageRepo(%q) = %q, want %q", tt.image, got, tt.want)
			}
		})
	}
}

func TestCheckImage(t *testing.T) {
	tests := []struct {
		image  string
		pinned bool
	}{
		{"ghcr.io/graphrag/extractor:0.1.0", true},
		{"ghcr.io/graphrag/extractor@sha256:0123", true},
		{"localhost:5000/extractor:1.2", true},
		{"ghcr.io/graphrag/extractor:latest", false},
		{"ghcr.io/graphrag/extractor", false},
		{"localhost:5000/extractor", false}, // the port is not a tag
		{"nats:", false},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			var got []Violation
			checkImage("c", tt.image, func(obj, rule, format string, args ...any) {
				got = append(got, Violation{obj, rule, format})
			})
			if (len(got) == 0) != tt.pinned {
				t.Errorf("pinned = %v, want %v (%v)", len(got) == 0, tt.pinned, got)
			}
		})
	}
}

func TestUnderSecretMount(t *testing.T) {
	mounts := map[string]string{"/etc/graphrag/nats": "nats-credentials"}
	tests := []struct {
		path string
		want bool
	}{
		{"/etc/graphrag/nats/user.nk", true},
		{"/etc/graphrag/nats/../nats/user.nk", true},
		{"/etc/graphrag/nats", false}, // the directory itself is not a file in it
		{"/etc/graphrag/natsy/user.nk", false},
		{"/etc/graphrag/nats/../api/tokens", false},
		{"etc/graphrag/nats/user.nk", false},
		{"sk-live-123", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := underSecretMount(tt.path, mounts); got != tt.want {
				t.Errorf("underSecretMount(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// FuzzImageRepo: image references come from manifests anyone may edit; the parser must
// never panic and must return a prefix of its input without a digest.
func FuzzImageRepo(f *testing.F) {
	for _, s := range []string{"ghcr.io/graphrag/extractor:0.1.0", "a@sha256:x", "localhost:5000/x", ":", "@", "/:", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		repo := imageRepo(image)
		if !strings.HasPrefix(image, repo) {
			t.Errorf("imageRepo(%q) = %q, not a prefix", image, repo)
		}
		if strings.Contains(repo, "@") {
			t.Errorf("imageRepo(%q) = %q keeps a digest", image, repo)
		}
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			t.Errorf("imageRepo(%q) = %q keeps a tag", image, repo)
		}
	})
}
