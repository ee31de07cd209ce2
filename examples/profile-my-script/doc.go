// Package example is a module of its own that profiles a user's script
// (generate.py) with deepprof as a Go test, as another repository would:
// its go.mod requires deepprof (replaced by this checkout), and
// profile_test.go, behind the gpu build tag, uses package deepproftest.
//
//	go test -tags gpu -v .                  # on a GPU machine (skips without one, saying why)
//	go test -tags gpu -v . -update          # first run: write golden/structure and golden/perf from the run
//	go test -tags gpu -v -artifacts .       # keep the run directory under _artifacts/
//	go test -c -tags gpu -o profile.test .  # build here, run ./profile.test -test.v there
//	go test .                               # no GPU: the expectations against the recorded run
package example
