module github.com/graphrag/graphrag/services/query

go 1.26.0

require github.com/graphrag/graphrag/pkg v0.0.0

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
)

replace github.com/graphrag/graphrag/pkg => ../../pkg
