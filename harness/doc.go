// Package harness is deepprof's library face: it rebuilds a run's reports.
//
// Report (deepprof report MAIN) is the pipeline a reviewer follows top to
// bottom: open the run directory; ReportRun: read its settings, rebuild
// (pipeline.go: load each input once, analyse them into one result, render
// every file from it, commit the files and their records), then write the
// manifest once. RebuildRun is the same rebuild as a session's last step
// (session.Session.Report): a session profiles a program, then hands its
// run directory here. Comparing runs is package compare (deepprof diff,
// deepprof baseline); reading a run's results in a test is package
// deepproftest.
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
//	session                      preflight, tools, steps, ranks, the CUPTI library
//	harness                      this package: rebuild and the facade
//	cmd/deepprof, deepproftest   the command and the test API
package harness
