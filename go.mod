module github.com/llm-perf-opt/deepprof

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	github.com/sebdah/goldie/v2 v2.8.0
	github.com/stretchr/testify v1.12.1
	github.com/yuin/goldmark v1.8.7
)

require (
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/sergi/go-diff v1.0.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
