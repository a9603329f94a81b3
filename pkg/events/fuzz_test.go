package events

import (
	"errors"
	"testing"
)

// FuzzDecode checks that no input makes a decoder panic, that every failure is an
// ErrInvalid, and that whatever decodes also re-encodes.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema":"graphrag.document.v1","corpus":"demo","id":"a.md","text":"Hello world."}`))
	f.Add([]byte(`{"schema":"graphrag.chunk.v1","corpus":"demo","id":"d:0:a","document_id":"d","position":0,"total":1,"text":"x"}`))
	f.Add([]byte(`{"schema":"graphrag.extraction.v1","corpus":"demo","chunk_id":"c","document_id":"d","method":"m","entities":[{"name":"A"}],"relationships":[{"source":"A","target":"B","strength":1}]}`))
	f.Add([]byte(`{"schema":"graphrag.community.v1","corpus":"demo","id":"c","level":1,"member_count":2,"run":"r"}`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range []Event{&Document{}, &Chunk{}, &Extraction{}, &Community{}, &Summary{}} {
			err := Decode(data, e)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("%s: error %v does not match ErrInvalid", e.SchemaName(), err)
				}
				continue
			}
			if _, err := Encode(e); err != nil {
				t.Fatalf("%s: decoded event does not encode: %v", e.SchemaName(), err)
			}
		}
	})
}
