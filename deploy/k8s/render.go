package k8s

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Object is one rendered manifest: its identity and its JSON form.
type Object struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	JSON       []byte
}

// ID names the object in messages: Kind/namespace/name.
func (o Object) ID() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// Render builds the kustomization in dir (a directory on disk) the way `kustomize build`
// does with its default options (load restrictions on, plugins off) and returns the
// objects in output order.
func Render(dir string) ([]Object, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	out := make([]Object, 0, rm.Size())
	for _, r := range rm.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("rendering %s: encoding %s: %w", dir, r.CurId(), err)
		}
		out = append(out, Object{
			APIVersion: r.GetApiVersion(),
			Kind:       r.GetKind(),
			Namespace:  r.GetNamespace(),
			Name:       r.GetName(),
			JSON:       b,
		})
	}
	return out, nil
}

// ErrDecode is wrapped by DecodeStrict when an object does not fit its Go type.
var ErrDecode = errors.New("k8s: object does not decode strictly")

// DecodeStrict decodes o into v, rejecting fields v does not have (a misspelt or
// misplaced field that the API server would silently drop) and trailing data.
func DecodeStrict(o Object, v any) error {
	dec := json.NewDecoder(bytes.NewReader(o.JSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDecode, o.ID(), err)
	}
	if dec.More() {
		return fmt.Errorf("%w: %s: trailing data", ErrDecode, o.ID())
	}
	return nil
}
