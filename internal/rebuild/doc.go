// Package rebuild remakes a run's derived files from its raw records.
//
// It is `deepprof report MAIN` and a session's last step, with no GPU:
// Report rebuilds a run with its own settings (config.yaml), under the
// run's lock, and writes the manifest once; Run is a session's rebuild,
// given the CUPTI timeline the session read (the session holds the lock
// and writes the manifest); StartTrace begins the trace of that timeline
// while the session's deep pass runs.
//
// The pipeline (pipeline.go) is four steps, read top to bottom: load each
// input once (sources.go chooses them, exports.go reads each ncu export
// once for all its uses), analyse them into one result, render every file
// from it (package render, to an io.Writer), commit the files and their
// records in the manifest. Load changes nothing at the run's paths (it
// sweeps the staging folder and stages the trace there); commit writes
// every file and the manifest.
//
// It is not the facade: the command and the test API reach it through
// package harness. It runs no profiler: package session does, and calls
// it last.
package rebuild
