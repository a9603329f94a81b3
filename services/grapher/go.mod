module github.com/graphrag/graphrag/services/grapher

go 1.26.0

require github.com/graphrag/graphrag/pkg v0.0.0

replace github.com/graphrag/graphrag/pkg => ../../pkg
