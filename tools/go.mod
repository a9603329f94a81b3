module github.com/graphrag/graphrag/tools

go 1.26.0
