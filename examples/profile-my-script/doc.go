// Package example is a module of its own that profiles a user's script
// (generate.py) with deepprof as a Go test, as another repository would:
// its go.mod requires deepprof (replaced by this checkout), and
// profile_test.go, behind the gpu build tag, uses package deepproftest.
//
//	go test -tags gpu -v .                  # on a GPU machine
//	go test -tags gpu -v . -update          # with run.Baseline: write golden/perf/generate.json
//	go test -c -tags gpu -o profile.test .  # build here, run ./profile.test -test.v there
package example
