// Package harness is deepprof's library face: the one door to what the
// command and the test API do.
//
// Each command of deepprof is a function here, with options and results
// of this package's own types: NewProfile and Session (deepprof profile),
// Report, Merge, Kernels, Regions, Diff, Baseline, and for tests
// CompareBaseline, ReadSummary, FindGPU, FindNcu. The data it hands out
// (summary.json's facts.Summary and what it holds, the regions report) is
// declared in package facts, the public data, whose documentation is
// summary.json's schema. cmd/deepprof and deepproftest import this
// package and facts only (TestFacadeIsTheOneDoor), and every type an
// exported identifier hands out is declared here or in facts, with no
// alias, so that a program of another module can name it and go doc
// reaches it (TestFacadeTypes).
//
// Report (deepprof report MAIN) opens the run directory and hands it to
// internal/rebuild: read its settings, rebuild (load each input once,
// analyse them into one result, render every file from it, commit the
// files and their records), then write the manifest once. The same
// rebuild is a session's last step: internal/session profiles a program,
// then calls it on its run directory.
//
// Everything else of deepprof is under internal/, above facts, in layers
// that import only downward (TestLayers holds the module to them):
//
//	facts                        the public data: summary.json's schema, phases, regions, diff
//	model, input                 the shared vocabulary; bounded reads, gzip
//	machine                      the GPU (NVML), its peaks, the tools' versions
//	ncu, nsys, cupti, workload   readers: a tool's bytes to the model
//	rundir                       the run directory: layout, manifest, atomic writes, merge
//	timeline                     the CUPTI timeline: launches attributed to their ranges
//	kernels, regions, phases     analyses of launches
//	config, compare, summary     the profile; run against run; the summary's numbers
//	render                       Markdown, JSON, HTML, SVG, trace from facts: to an io.Writer
//	rebuild                      the rebuild: load, analyse, render, commit
//	session                      preflight, tools, steps, ranks, the CUPTI library
//	harness                      this package: the facade
//	cmd/deepprof, deepproftest   the command and the test API
package harness
