// Command localbase writes a minimal static base image into ko's on-disk cache, so that
// `ko build` works without reaching a container registry (no Docker engine, no network).
//
// ko pulls its base image from a registry, except when the base is named by digest and
// that digest is already in the OCI layout under $KOCACHE/img. localbase builds such an
// image from files on this machine and appends it there:
//
//	/etc/passwd, /etc/group   root and nonroot (65532:65532), as distroless has them
//	/etc/ssl/certs/ca-certificates.crt   the build host's CA bundle (-ca-bundle)
//	/tmp (1777), /home/nonroot
//	config: User 65532, SSL_CERT_FILE set
//
// and prints the reference to use as KO_DEFAULTBASEIMAGE, e.g.
//
//	go run ./deploy/ko/localbase -cache "$KOCACHE"
//	localhost/graphrag-static@sha256:…
//
// The layer is byte-for-byte reproducible (fixed file times, sorted entries), so the
// digest only changes with the CA bundle. It is not distroless: no tzdata, no
// /etc/nsswitch.conf, no os-release. The services need none of them (they use UTC and
// Go's own resolver); prefer the registry base whenever a registry is reachable.
package main
