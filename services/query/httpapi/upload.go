package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/graphrag/graphrag/pkg/docread"
	"github.com/graphrag/graphrag/pkg/events"
	"github.com/graphrag/graphrag/services/query/engine"
)

// uploadBody is the JSON form of an upload: one document event's fields.
type uploadBody struct {
	ID          string            `json:"id"`
	Title       string            `json:"title"`
	Text        string            `json:"text"`
	ContentType string            `json:"content_type"`
	Source      string            `json:"source"`
	Metadata    map[string]string `json:"metadata"`
}

// uploaded is one published document in the answer to an upload.
type uploaded struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	ContentHash string `json:"content_hash"`
}

// uploadResponse is the 202 body of an upload.
type uploadResponse struct {
	IDs       []string   `json:"ids"`
	Documents []uploaded `json:"documents"`
}

// errUnsupportedMedia marks a body or file the upload cannot read (415).
var errUnsupportedMedia = errors.New("unsupported media type")

type unsupportedMedia struct{ msg string }

func (u *unsupportedMedia) Error() string        { return u.msg }
func (u *unsupportedMedia) Is(target error) bool { return target == errUnsupportedMedia }

// uploadDocuments publishes the documents of a JSON body (one document event's
// fields) or of a multipart body (files read by docread, as `graphrag publish` reads
// them). Every document is read and validated before any is published, so a request
// that fails publishes nothing. With ?dry_run=true it publishes nothing and answers
// what indexing the documents is expected to cost (estimate.go).
func (a *API) uploadDocuments(w http.ResponseWriter, r *http.Request) {
	corpus := r.PathValue("corpus")
	if err := events.ValidateCorpus(corpus); err != nil {
		a.fail(w, r, engine.BadRequestf("%v", err))
		return
	}
	dry, err := dryRun(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if a.publisher == nil && !dry {
		a.fail(w, r, &unavailable{"publishing documents"})
		return
	}
	docs, err := readUpload(r, corpus)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if dry {
		a.estimateUpload(w, r, docs)
		return
	}
	resp := uploadResponse{IDs: []string{}, Documents: []uploaded{}}
	for _, d := range docs {
		if err := a.publisher.PublishDocument(r.Context(), d); err != nil {
			a.fail(w, r, fmt.Errorf("publishing %s (after %d published): %w", d.ID, len(resp.IDs), err))
			return
		}
		resp.IDs = append(resp.IDs, d.ID)
		resp.Documents = append(resp.Documents, uploaded{ID: d.ID, Title: d.Title, ContentHash: events.Hash(d.Text)})
	}
	writeJSON(w, http.StatusAccepted, resp)
}

// readUpload reads and validates the documents of an upload request.
func readUpload(r *http.Request, corpus string) ([]events.Document, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, &unsupportedMedia{"Content-Type: want application/json or multipart/form-data"}
	}
	var docs []events.Document
	switch mt {
	case "application/json":
		d, err := readJSONUpload(r.Body, corpus)
		if err != nil {
			return nil, err
		}
		docs = []events.Document{d}
	case "multipart/form-data":
		if docs, err = readMultipartUpload(multipart.NewReader(r.Body, params["boundary"]), corpus); err != nil {
			return nil, err
		}
	default:
		return nil, &unsupportedMedia{fmt.Sprintf("Content-Type %s: want application/json (one document) or multipart/form-data (files)", mt)}
	}
	for _, d := range docs {
		d.Schema = events.SchemaDocument
		if err := d.Validate(); err != nil {
			return nil, engine.BadRequestf("document %q: %v", d.ID, err)
		}
	}
	return docs, nil
}

// readJSONUpload reads the JSON form of an upload. The body must be UTF-8: encoding/json
// would replace each invalid byte with U+FFFD and the document would be stored
// corrupted, where the same bytes as a file are refused (docread).
func readJSONUpload(body io.Reader, corpus string) (events.Document, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		if isReadError(err) {
			return events.Document{}, err
		}
		return events.Document{}, engine.BadRequestf("body: %v", err)
	}
	if !utf8.Valid(b) {
		return events.Document{}, engine.BadRequestf("body: is not valid UTF-8 (at byte %d); send the text as UTF-8", invalidUTF8At(b))
	}
	var u uploadBody
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		return events.Document{}, engine.BadRequestf("body: %v", err)
	}
	if dec.More() {
		return events.Document{}, engine.BadRequestf("body: trailing data after the JSON object")
	}
	return events.Document{Corpus: corpus, ID: u.ID, Title: u.Title, Text: u.Text, ContentType: u.ContentType, Source: u.Source, Metadata: u.Metadata}, nil
}

// readMultipartUpload reads every file part; a part that is not a file is refused (a
// form field would otherwise be silently ignored).
func readMultipartUpload(mr *multipart.Reader, corpus string) ([]events.Document, error) {
	var docs []events.Document
	seen := map[string]string{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				return nil, err
			}
			return nil, engine.BadRequestf("multipart body: %v", err)
		}
		name := partPath(p)
		if name == "" {
			return nil, engine.BadRequestf("multipart part %q is not a file: send each document as a file part", p.FormName())
		}
		d, err := readFilePart(p, name, corpus)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[d.ID]; dup {
			return nil, engine.BadRequestf("files %q and %q have the same document id %q", prev, name, d.ID)
		}
		seen[d.ID] = name
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, engine.BadRequestf("multipart body holds no file")
	}
	return docs, nil
}

func readFilePart(p *multipart.Part, name, corpus string) (events.Document, error) {
	if !docread.Supported(name) {
		return events.Document{}, &unsupportedMedia{fmt.Sprintf("file %q: %v", name, fmt.Errorf("%w (want one of %v)", docread.ErrUnsupported, docread.Extensions))}
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(p, docread.MaxBytes+1)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return events.Document{}, err
		}
		return events.Document{}, engine.BadRequestf("file %q: %v", name, err)
	}
	doc, err := docread.Read(name, buf.Bytes())
	if err != nil {
		return events.Document{}, engine.BadRequestf("file %q: %v", name, err)
	}
	return events.Document{Corpus: corpus, ID: docread.ID(name), Title: doc.Title, Source: name, ContentType: doc.ContentType, Text: doc.Text}, nil
}

// partPath is the name a file part gives its file: the file name, or the relative path
// a client sends for a file of a folder (as a browser's folder upload does, and
// curl -F 'file=@x.md;filename=notes/x.md'), so that the document gets the id graphrag
// publish gives the file when it publishes the folder's parent. A path that leaves
// its folder (absolute, "..") or a Windows path keeps only its last element, as
// multipart.Part.FileName keeps only the base name.
func partPath(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return p.FileName()
	}
	name, ok := params["filename"]
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(name, '\\'); i >= 0 {
		name = name[i+1:]
	}
	clean := path.Clean(name)
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return path.Base(clean)
	}
	return clean
}

// invalidUTF8At is the offset of the first byte of b that is not valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}
