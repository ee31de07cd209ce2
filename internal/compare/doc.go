// Package compare says whether run B regressed from run A or a baseline.
//
// Compare takes two runs, B against A: per-stage wall times of the program
// alone (stage1/report.json, one number per repeat; without it, the CUPTI
// run's repeats after the library detached, timeline/report.json's
// "alone"; else summary.json's stages), kernel totals matched by
// kernel name and device (kernels.json), NVTX region totals
// (ncu/regions/report.json's aggregate) and MFU (summary.json, when a run
// has one). It is what deepprof diff prints. A Baseline keeps a run's
// performance as a golden file (deepprof baseline MAIN; golden/perf/*.json
// in a test, written under -update), which deepprof diff takes as run A,
// and CompareBaseline checks a later run against it within tolerances
// (model.Tolerances), as deepproftest.BaselineChecker does in a test.
//
// It reads a run directory's contract files and nothing else: it does not
// parse tool output (packages ncu, kernels, regions do), rebuilds no
// derived file (package harness does, deepprof report) and renders nothing
// (package render writes a Result as Markdown; Result.JSON is its JSON).
// A Result is typed data.
//
// # The verdict
//
// A change counts only when |Δ| = |B − A| exceeds the threshold, a fraction
// of A (deepprof diff's default is 5%), and, where both runs have at least
// two repeats of a stage, Welch's t-test (two-sided, α = 0.05) finds the
// means different. A change beyond the threshold that the test does not
// find significant is "noise". Slower is a regression, faster an
// improvement: reported, never failing.
//
// Why Welch's t-test: the workload gives few repeats (3 by default), and a
// test must be able to fire on them. A rank test such as Mann-Whitney U (what
// benchstat uses) cannot: with 3 repeats against 3 its smallest two-sided
// p-value is 0.1. A "two standard errors" rule can, but it ignores how few
// the repeats are: with 3 and 3 it accepts |t| > 2, which two-sided is
// about a 12% to 18% false-alarm rate per stage (Student's t with 2 to 4
// degrees of freedom). Welch's test works from each run's mean, standard
// deviation and count (so a baseline file that keeps only those is enough),
// does not assume equal spreads, and its Welch-Satterthwaite degrees of
// freedom charge for small counts. The threshold stays in front of it: with
// a very steady GPU, a significant 0.5% change is real but not a regression
// worth failing CI.
//
// Warm-up: a run whose workload does not warm up enough shows a slow first
// repeat, one-time costs such as kernel selection (the recording that
// showed it is in docs/measurements.md, "Why diff's statistics"). Kept, it
// swamps the spread, and no steady-state change could ever be significant.
// So when a stage has at least 3 repeats and its first is more than 1.5× the
// median of the others, the first is dropped from the mean and the test, and
// the report says so (the row's warm-up value). The rule is applied to each
// run on its own; stage times compare steady states. The rule, the mean and
// sd, and Welch's test are package model's, the same that the stakeholder
// summary's stage rows, tokens/s and MFU use: a stage has one mean
// everywhere.
//
// Kernel and region totals have no repeats (one profiled run each): the
// threshold decides for them, with a floor. A change counts only when it
// also exceeds model.DefaultFloor (1%) of A's kernel time, collectives left
// out (their time holds a rank's wait), and, for a kernel whose launches'
// spread a run recorded, twice the spread of its total were its launches
// independent draws (√(n_A·sd_A² + n_B·sd_B²)): a 9 µs kernel's +7% in a
// 2 ms run is not a regression.
//
// # Host or GPU
//
// A launch-bound program's wall follows the host, which moves by half
// between two processes on one machine. So each stage's wall is set against
// its GPU work (facts.StageWork): its kernel time, busy time and launches
// per steady-state instance from summary.json's phase rows, or, without a
// timeline, its region's kernel time and launches over a pass
// (summary.json's regions of every launch). A stage whose GPU work grew
// beyond the kernel threshold is a regression (cause gpu), whatever its
// wall did. A wall that moved with the work unchanged is the GPU's (a
// regression when slower) when the stage is GPU-bound in either run, and
// the host's when it is launch-bound in both: verdict Host, reported and
// not failing, unless the comparison gates the host (model.Thresholds'
// GateHost: deepprof diff --gate host, the tolerances' gate, a baseline
// file's "gate"). With the work or the bound unknown, the wall alone
// decides. From region totals a stage is launch-bound when the kernels of a
// whole pass fill at most half of one instance's wall (the GPU is idle for
// at least the rest); otherwise its bound is unknown.
//
// A kernel in B's list that is not in A's is "appeared" and a regression
// when its time exceeds the kernel threshold's share of A's kernel time (the
// sum of every kernel A lists); one in A's list only is "disappeared",
// reported. kernels.json may list only the top N kernels, so a kernel whose
// time is no more than the smallest listed kernel of the other run may just
// have crossed the cut: it is "entered list" or "left list", reported, never
// a regression. A renamed kernel is one disappeared and one appeared.
//
// MFU is a regression when it drops by more than the MFU threshold relative
// to A. A run without summary.json, or with a null figure, has MFU "not
// available", never 0; MFU is optional and its absence never fails.
//
// # Missing and malformed inputs
//
// A run without stage1/report.json, kernels.json or ncu/regions/report.json
// has that part left out of the comparison and listed in Result.Missing: a
// comparison with missing parts is incomplete, and deepprof diff exits 2
// unless it found a regression in what it could compare (then 1). A file that
// exists but does not parse, or breaks its contract, is an error naming the
// file and line.
//
// # Baselines
//
// A baseline keeps the numbers that matter (per-stage mean, sd and repeats;
// the top kernels' totals; region totals; MFU) in a small JSON file,
// deepprof-baseline/3, which says in itself what each field holds (Fields),
// with each stage's GPU work and the kept kernels' spread, so that a
// baseline gates as its run does, and the gate a comparison with it uses
// when it asks for none (GatesHost). deepprof-baseline/2 files are still
// read, and deepprof-baseline/1 files (their stages judged by their walls
// alone).
//
// # Several runs
//
// Welch's test over the repeats of one process cannot see how a figure
// varies between processes: a launch-bound stage's mean followed its
// host's speed by half between the two recorded leases of one program. A
// baseline made of several runs of one program, each its own process
// (FromRuns; deepprof baseline MAIN RUN...), keeps the first run's
// figures and, of each stage's mean and each kept kernel's total, the
// spread between all the runs (BetweenRuns: n, min and max). Compared with
// such a baseline as run A, a stage or kernel of B counts as changed only
// where it lies beyond that spread by more than the threshold (and, for a
// kernel, its floor) of the spread's nearest edge: a move inside it, or
// just past it, is noise (the row's WithinRuns), whatever the threshold and
// Welch's test said against A's own figure, and an MFU change that
// restates such a stage is noise too. Runs of another setup
// (SetupDifferences), or one run named twice, make no such baseline
// (ErrNotOneProgram).
// A check is a comparison as above, with the same verdict rule: a move
// counts when it exceeds the tolerance and, for a stage with repeats,
// Welch's t-test finds it significant. The file keeps each stage's mean,
// standard deviation and count, which is all the test needs, and only the
// top kernels, so a kernel under the cut in one run may show as "entered
// list" or "left list", never as a regression. This package knows nothing
// of where profiles keep their tolerances: callers pass them.
package compare
