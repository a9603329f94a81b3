package milvusstore

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/graphrag/graphrag/pkg/vectorstore"
)

// encodeRecords turns records into Milvus' column-wise insert data.
func encodeRecords(recs []vectorstore.Record, dim int) ([]*schemapb.FieldData, error) {
	ids := make([]string, len(recs))
	texts := make([]string, len(recs))
	attrs := make([][]byte, len(recs))
	flat := make([]float32, 0, len(recs)*dim)
	for i, r := range recs {
		ids[i] = r.ID
		texts[i] = r.Text
		flat = append(flat, r.Vector...)
		a := r.Attrs
		if a == nil {
			a = map[string]string{}
		}
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encoding attributes of %q: %w", r.ID, err)
		}
		attrs[i] = b
	}
	return []*schemapb.FieldData{
		stringField(fieldID, ids),
		{
			Type: schemapb.DataType_FloatVector, FieldName: fieldVector,
			Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
				Dim:  int64(dim),
				Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: flat}},
			}},
		},
		stringField(fieldText, texts),
		{
			Type: schemapb.DataType_JSON, FieldName: fieldAttrs,
			Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
				Data: &schemapb.ScalarField_JsonData{JsonData: &schemapb.JSONArray{Data: attrs}},
			}},
		},
	}, nil
}

func stringField(name string, data []string) *schemapb.FieldData {
	return &schemapb.FieldData{
		Type: schemapb.DataType_VarChar, FieldName: name,
		Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_StringData{StringData: &schemapb.StringArray{Data: data}},
		}},
	}
}

// decodeRecords reads the output fields of a query or search (id, vector,
// text, attrs) back into records, in the server's order.
func decodeRecords(fields []*schemapb.FieldData) ([]vectorstore.Record, error) {
	var ids, texts []string
	var attrs [][]byte
	var flat []float32
	var dim int
	for _, fd := range fields {
		switch fd.GetFieldName() {
		case fieldID:
			ids = fd.GetScalars().GetStringData().GetData()
		case fieldText:
			texts = fd.GetScalars().GetStringData().GetData()
		case fieldAttrs:
			attrs = fd.GetScalars().GetJsonData().GetData()
		case fieldVector:
			dim = int(fd.GetVectors().GetDim())
			flat = fd.GetVectors().GetFloatVector().GetData()
		}
	}
	n := len(ids)
	if len(texts) != n || len(attrs) != n || dim < 1 || len(flat) != n*dim {
		return nil, fmt.Errorf("milvusstore: malformed result: %d ids, %d texts, %d attrs, %d floats of dim %d", n, len(texts), len(attrs), len(flat), dim)
	}
	recs := make([]vectorstore.Record, n)
	for i := range recs {
		var a map[string]string
		if len(attrs[i]) > 0 {
			if err := json.Unmarshal(attrs[i], &a); err != nil {
				return nil, fmt.Errorf("milvusstore: attributes of %q: %w", ids[i], err)
			}
		}
		if len(a) == 0 {
			a = nil
		}
		recs[i] = vectorstore.Record{
			ID:     ids[i],
			Vector: flat[i*dim : (i+1)*dim : (i+1)*dim],
			Text:   texts[i],
			Attrs:  a,
		}
	}
	return recs, nil
}

// decodeAttrs adds the ids and attributes of a query result to out.
func decodeAttrs(fields []*schemapb.FieldData, out map[string]map[string]string) error {
	var ids []string
	var attrs [][]byte
	for _, fd := range fields {
		switch fd.GetFieldName() {
		case fieldID:
			ids = fd.GetScalars().GetStringData().GetData()
		case fieldAttrs:
			attrs = fd.GetScalars().GetJsonData().GetData()
		}
	}
	if len(attrs) != len(ids) {
		return fmt.Errorf("milvusstore: malformed result: %d ids, %d attrs", len(ids), len(attrs))
	}
	for i, id := range ids {
		a := map[string]string{}
		if len(attrs[i]) > 0 {
			if err := json.Unmarshal(attrs[i], &a); err != nil {
				return fmt.Errorf("milvusstore: attributes of %q: %w", id, err)
			}
		}
		if a == nil { // stored as JSON null
			a = map[string]string{}
		}
		out[id] = a
	}
	return nil
}

// floatVectorBytes is the placeholder encoding of a float vector:
// little-endian float32s.
func floatVectorBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
