package bus

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"
)

// ObjectRef points at a payload kept in an object store; it travels inside
// events in place of data larger than the server's max payload.
type ObjectRef struct {
	Bucket string `json:"bucket"`
	Name   string `json:"name"`
	Size   uint64 `json:"size"`
	// Digest is the server-computed digest, "SHA-256=<base64url>".
	Digest string `json:"digest"`
}

// PutObject stores r as bucket/name (creating the bucket if needed; an
// existing object of that name is replaced) and returns a reference to it.
func (b *Bus) PutObject(ctx context.Context, bucket, name string, r io.Reader) (ObjectRef, error) {
	obs, err := b.js.ObjectStore(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = b.ensureObjectStore(ctx, bucket)
	}
	if err != nil {
		return ObjectRef{}, fmt.Errorf("opening object store %s: %w", bucket, err)
	}
	info, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name}, r)
	if err != nil {
		return ObjectRef{}, fmt.Errorf("putting object %s/%s: %w", bucket, name, err)
	}
	return ObjectRef{Bucket: bucket, Name: name, Size: info.Size, Digest: info.Digest}, nil
}

// GetObject reads the object ref points at. It fails with ErrNotFound if it
// is gone, and with an error if its size or digest differs from ref (the
// object was replaced since ref was taken).
func (b *Bus) GetObject(ctx context.Context, ref ObjectRef) ([]byte, error) {
	obs, err := b.js.ObjectStore(ctx, ref.Bucket)
	if err != nil {
		return nil, fmt.Errorf("opening object store %s: %w", ref.Bucket, translate(err))
	}
	res, err := obs.Get(ctx, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("getting object %s/%s: %w", ref.Bucket, ref.Name, translate(err))
	}
	defer res.Close()
	info, err := res.Info()
	if err != nil {
		return nil, fmt.Errorf("getting object %s/%s: %w", ref.Bucket, ref.Name, err)
	}
	if ref.Digest != "" && info.Digest != ref.Digest {
		return nil, fmt.Errorf("getting object %s/%s: %w: digest %s, reference says %s", ref.Bucket, ref.Name, ErrObjectChanged, info.Digest, ref.Digest)
	}
	// The reader checks the digest of what it read against the stored one
	// at EOF, so a corrupted chunk surfaces here as an error.
	data, err := io.ReadAll(res)
	if err != nil {
		return nil, fmt.Errorf("reading object %s/%s: %w", ref.Bucket, ref.Name, err)
	}
	if uint64(len(data)) != ref.Size && ref.Digest != "" {
		return nil, fmt.Errorf("reading object %s/%s: %w: %d bytes, reference says %d", ref.Bucket, ref.Name, ErrObjectChanged, len(data), ref.Size)
	}
	return data, nil
}

// ErrObjectChanged is returned by GetObject when the stored object is not the
// one the reference was made for.
var ErrObjectChanged = errors.New("object changed since reference was made")
