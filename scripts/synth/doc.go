// Command synth writes a SYNTHETIC ncu raw page of any size.
//
// A real page's rows are repeated to a size (synth.RepeatRows), for
// measuring deepprof's readers on large inputs. What it writes is never a
// fixture: keep it out of the repository.
//
//	go run ./scripts/synth -size 1GiB fixtures/ncu/h200-llama-decode-basic/raw.csv > /tmp/synthetic-raw.csv
package main
