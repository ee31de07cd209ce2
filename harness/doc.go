// Package harness is deepprof's library face: the one door to what the
// command and the test API do.
//
// Each command of deepprof is a function here, with options and results
// of this package's own types: NewProfile and Session (deepprof profile),
// Report, Merge, Kernels, Regions, Diff, Baseline, and for tests
// CompareBaseline, ReadSummary, FindGPU, FindNcu. The data it hands out
// (summary.json's Summary and what it holds) is declared in internal
// packages and named here by aliases (names.go). cmd/deepprof and
// deepproftest import this package only (TestFacadeIsTheOneDoor), and
// every type an exported identifier hands out can be named from another
// module (TestFacadeTypes).
//
// Report (deepprof report MAIN) opens the run directory and hands it to
// internal/rebuild: read its settings, rebuild (load each input once,
// analyse them into one result, render every file from it, commit the
// files and their records), then write the manifest once. The same
// rebuild is a session's last step: internal/session profiles a program,
// then calls it on its run directory.
//
// Everything else of deepprof is under internal/, in layers that import
// only downward (TestLayers holds the module to them):
//
//	model, input                 the shared vocabulary; bounded reads, gzip
//	machine                      the GPU (NVML), its peaks, the tools' versions
//	ncu, nsys, cupti, workload   readers: a tool's bytes to the model
//	rundir                       the run directory: layout, manifest, atomic writes, merge
//	timeline                     the CUPTI timeline: launches attributed to their ranges
//	facts                        what the analyses found, as data (summary.json, phases, diff)
//	kernels, regions, phases     analyses of launches
//	config, compare, summary     the profile; run against run; the summary's numbers
//	render                       Markdown, JSON, HTML, SVG, trace from facts: to an io.Writer
//	rebuild                      the rebuild: load, analyse, render, commit
//	session                      preflight, tools, steps, ranks, the CUPTI library
//	harness                      this package: the facade
//	cmd/deepprof, deepproftest   the command and the test API
package harness
