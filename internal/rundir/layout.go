package rundir

import (
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Kind says what an artifact of a run directory is, and so what
// `deepprof report` does with it: it reads raw outputs and provenance,
// never writes them, and remakes every derived file.
type Kind string

// Artifact kinds.
const (
	// Provenance is what the run was: the GPU and tools, the configuration,
	// the workload's inputs. Written by deepprof profile.
	Provenance Kind = "provenance"
	// Raw is a tool's output: profiler reports, their exports and stats.
	Raw Kind = "raw"
	// Log is what a step printed.
	Log Kind = "log"
	// Derived is made from the raw outputs by deepprof report, every time.
	Derived Kind = "derived"
	// Index is the manifest: the session's record (steps, notes) and every
	// artifact's status, stamped again by each rebuild.
	Index Kind = "index"
)

// The files of a run directory, relative to MAIN, in slash form: the
// contract of docs/run-directory.md and what the session writes beside it.
// Each is in layout, with its kind; a new file is one constant and one
// layout entry.
const (
	// RunMark is the mark rundir.Create writes into every run directory
	// as it makes it (WriteMark): only a folder holding it is a run, and
	// only there does deepprof write or remove anything (Open).
	RunMark = ".deepprof-run"

	EnvJSON    = "env.json"
	ConfigYAML = "config.yaml"
	InputsYAML = "inputs.yaml"

	Stage1Report = "stage1/report.json"
	Stage1Log    = "stage1/workload.log"
	// Stage1Runs are the wall times of a program that stage 1 ran as a
	// whole process, workload.repeats times (workload.Runs).
	Stage1Runs = "stage1/runs.json"

	NcuSections        = "ncu/sections.txt"
	NcuTimingReport    = "ncu/timing.ncu-rep"
	NcuTimingRaw       = "ncu/timing-raw.csv"
	NcuTimingFunctions = "ncu/timing-functions.csv" // the same page, --print-kernel-base function (older runs: read, no longer written)
	NcuTimingLog       = "ncu/timing.log"
	NcuDiscoveryReport = "ncu/discovery.ncu-rep" // only when the NVTX filter matched nothing
	NcuDiscoveryLog    = "ncu/discovery.log"
	NcuDiscoveryRaw    = "ncu/discovery-raw.csv"
	NcuDeepReport      = "ncu/deep.ncu-rep"
	NcuDeepLog         = "ncu/deep.log"
	NcuDeepRangeReport = "ncu/deep-range.ncu-rep" // a refused range-replay attempt's report
	NcuDeepRangeLog    = "ncu/deep-range.log"
	NcuRaw             = "ncu/raw.csv"
	NcuDetails         = "ncu/details.csv"
	// NcuRanks holds a multi-rank deep pass (workload.launcher): one ncu
	// per rank, each writing RankPath(r, base) for the bases of
	// NcuDeepReport, NcuDeepLog, NcuRaw and NcuDetails.
	NcuRanks    = "ncu/ranks"
	NcuRankExec = "ncu/rank-exec.py" // the wrapper that starts ncu in a rank (session.Script)

	NsysDir = "nsys"
	// NsysOut is the prefix of what the nsys timeline writes: `nsys
	// profile -o` and `nsys stats --output` (the report is NsysOut plus
	// nsys's extension).
	NsysOut          = "nsys/run"
	NsysReport       = NsysOut + model.NsysExtReport
	NsysOldReport    = NsysOut + model.NsysExtOldReport // nsys before 2021.4
	NsysStream       = NsysOut + model.NsysExtStream    // what nsys collected and did not turn into a report
	NsysSQLite       = NsysOut + ".sqlite"
	NsysProfileLog   = "nsys/profile.log"
	NsysExportLog    = "nsys/export.log"
	NsysStatsLog     = "nsys/stats.log"
	NsysStatsBaseLog = "nsys/stats-base.log"
	// NsysBaseOut is the --output of the kernel summary over base names,
	// whose file nsys names itself (see nsys.ReportKernSumBase); the session
	// renames it to NsysKernSumBase.
	NsysBaseOut     = "nsys/base"
	NsysKernSumBase = NsysOut + "_" + model.NsysReportKernSum + "_base.csv"

	// The CUPTI timeline (the session's CUPTI library records, package
	// timeline reads): the plain workload run again with the library
	// injected, one record file per CUDA process in TimelineCupti
	// (cupti-<pid>.tsv, or .tsv.gz in a recorded copy), its own workload
	// report and log; the independent oracle's figures (torch.profiler, a
	// separate plain run) beside it.
	TimelineDir    = "timeline"
	TimelineCupti  = "timeline/cupti"
	TimelineReport = "timeline/report.json"
	// TimelineModel holds the model facts the automatic ranges read from
	// the program's transformers config (workload.ModelFacts).
	TimelineModel   = "timeline/model.json"
	TimelineLog     = "timeline/workload.log"
	OracleJSON      = "timeline/oracle-torch-profiler.json"
	OracleLog       = "timeline/oracle.log"
	TimelineTrace   = "timeline/trace.json.gz"     // Chrome trace-event JSON (Perfetto)
	TimelinePhases  = "timeline/phases.json"       // per phase: busy, idle, gaps, launch latency, copies
	OracleCheckJSON = "timeline/oracle-check.json" // the timeline against the oracle, row by row

	KernelsMD          = "kernels.md"
	KernelsJSON        = "kernels.json"
	RegionsDir         = "ncu/regions" // the run's totals by NVTX region
	RegionsMD          = "ncu/regions/report.md"
	RegionsJSON        = "ncu/regions/report.json"
	RegionsSampleDir   = "ncu/regions-sample" // the deep pass's sample by NVTX region, with its metrics
	RegionsSampleMD    = "ncu/regions-sample/report.md"
	RegionsSampleJSON  = "ncu/regions-sample/report.json"
	StakeholderSummary = "stakeholder_summary.md"
	SummaryJSON        = "summary.json"
	OperatorsMD        = "operators.md"
	ChartsDir          = "charts"
	ChartTopKernels    = "charts/top_kernels.svg"
	ChartCategories    = "charts/time_by_category.svg"
	ChartStages        = "charts/prefill_vs_decode.svg"
	ChartRoofline      = "charts/roofline.svg"
	ReportMD           = "report.md"
	ReportHTML         = "report.html"
	ManifestJSON       = "manifest.json"
)

// The summaries `nsys stats --output NsysOut` writes.
var (
	NsysKernSum = model.NsysStatsCSVPath(NsysOut, model.NsysReportKernSum)
	NsysNVTXSum = model.NsysStatsCSVPath(NsysOut, model.NsysReportNVTXSum)
)

// Spec is one entry of the layout.
type Spec struct {
	Path string // relative to MAIN, slash form
	Kind Kind
	Dir  bool // a directory, whose files are not listed one by one
}

// layout is the one registry of a run directory's files.
var layout = []Spec{
	{Path: RunMark, Kind: Provenance},
	{Path: EnvJSON, Kind: Provenance},
	{Path: ConfigYAML, Kind: Provenance},
	{Path: InputsYAML, Kind: Provenance},

	{Path: Stage1Report, Kind: Raw},
	{Path: Stage1Log, Kind: Log},
	{Path: Stage1Runs, Kind: Raw},

	{Path: NcuSections, Kind: Raw},
	{Path: NcuTimingReport, Kind: Raw},
	{Path: NcuTimingRaw, Kind: Raw},
	{Path: NcuTimingFunctions, Kind: Raw},
	{Path: NcuTimingLog, Kind: Log},
	{Path: NcuDiscoveryReport, Kind: Raw},
	{Path: NcuDiscoveryRaw, Kind: Raw},
	{Path: NcuDiscoveryLog, Kind: Log},
	{Path: NcuDeepReport, Kind: Raw},
	{Path: NcuDeepLog, Kind: Log},
	{Path: NcuDeepRangeReport, Kind: Raw},
	{Path: NcuDeepRangeLog, Kind: Log},
	{Path: NcuRaw, Kind: Raw},
	{Path: NcuDetails, Kind: Raw},
	{Path: NcuRanks, Kind: Raw, Dir: true},
	{Path: NcuRankExec, Kind: Raw}, // written by the session, kept to rerun a rank by hand

	{Path: NsysReport, Kind: Raw},
	{Path: NsysOldReport, Kind: Raw},
	{Path: NsysStream, Kind: Raw},
	{Path: NsysSQLite, Kind: Raw},
	{Path: NsysKernSum, Kind: Raw},
	{Path: NsysNVTXSum, Kind: Raw},
	{Path: NsysKernSumBase, Kind: Raw},
	{Path: NsysProfileLog, Kind: Log},
	{Path: NsysExportLog, Kind: Log},
	{Path: NsysStatsLog, Kind: Log},
	{Path: NsysStatsBaseLog, Kind: Log},

	{Path: TimelineCupti, Kind: Raw, Dir: true},
	{Path: TimelineReport, Kind: Raw},
	{Path: TimelineModel, Kind: Raw},
	{Path: TimelineLog, Kind: Log},
	{Path: OracleJSON, Kind: Raw},
	{Path: OracleLog, Kind: Log},
	{Path: TimelineTrace, Kind: Derived},
	{Path: TimelinePhases, Kind: Derived},
	{Path: OracleCheckJSON, Kind: Derived},

	{Path: KernelsMD, Kind: Derived},
	{Path: KernelsJSON, Kind: Derived},
	{Path: RegionsDir, Kind: Derived, Dir: true},
	{Path: RegionsMD, Kind: Derived},
	{Path: RegionsJSON, Kind: Derived},
	{Path: RegionsSampleDir, Kind: Derived, Dir: true},
	{Path: RegionsSampleMD, Kind: Derived},
	{Path: RegionsSampleJSON, Kind: Derived},
	{Path: StakeholderSummary, Kind: Derived},
	{Path: SummaryJSON, Kind: Derived},
	{Path: OperatorsMD, Kind: Derived},
	{Path: ChartsDir, Kind: Derived, Dir: true},
	{Path: ChartTopKernels, Kind: Derived},
	{Path: ChartCategories, Kind: Derived},
	{Path: ChartStages, Kind: Derived},
	{Path: ChartRoofline, Kind: Derived},
	{Path: ReportMD, Kind: Derived},
	{Path: ReportHTML, Kind: Derived},
	{Path: ManifestJSON, Kind: Index},
}

// RankPlaceholder stands for the rank in a path given to every rank alike
// (RankPath(RankPlaceholder, ...)); the rank wrapper replaces it.
const RankPlaceholder = "{rank}"

// RankPath is the file of one rank's deep pass named like the single-process
// file rel (NcuRaw: "ncu/ranks/rank1/raw.csv"); rank is a number or
// RankPlaceholder.
func RankPath(rank, rel string) string {
	return NcuRanks + "/rank" + rank + "/" + path.Base(rel)
}

// Ranks lists the ranks that have a folder under NcuRanks in the run
// directory dir (rank<R>, R a number written plainly), by rank, as text.
// Only folders of the run are listed: a link (out of the run or not) is
// not a rank's folder.
func Ranks(dir string) []string {
	ents, err := ReadDirIn(dir, filepath.Join(dir, filepath.FromSlash(NcuRanks)))
	if err != nil {
		return nil
	}
	var nums []int
	for _, e := range ents {
		r, ok := strings.CutPrefix(e.Name(), "rank")
		n, err := strconv.Atoi(r)
		if ok && e.IsDir() && err == nil && n >= 0 && strconv.Itoa(n) == r {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = strconv.Itoa(n)
	}
	return out
}

// Lookup returns the layout entry of rel.
func Lookup(rel string) (Spec, bool) {
	i := slices.IndexFunc(layout, func(s Spec) bool { return s.Path == rel })
	if i < 0 {
		// A file of a directory (the CUPTI records, a region's kernel
		// table) is of its directory's kind.
		i = slices.IndexFunc(layout, func(s Spec) bool { return s.Dir && strings.HasPrefix(rel, s.Path+"/") })
	}
	if i < 0 {
		return Spec{}, false
	}
	return layout[i], true
}

// Layout returns every entry, in the registry's order.
func Layout() []Spec { return slices.Clone(layout) }

// IsDerived reports whether rel (a path inside a run directory, either
// separator) is one of DerivedRoots or inside one.
func IsDerived(rel string) bool {
	rel = filepath.ToSlash(rel)
	return slices.ContainsFunc(DerivedRoots(), func(root string) bool {
		return rel == root || strings.HasPrefix(rel, root+"/")
	})
}

// DerivedRoots are the derived files and directories that deepprof report
// remakes, each once: a file inside a listed directory is left out.
func DerivedRoots() []string {
	var out []string
	for _, s := range layout {
		if s.Kind == Derived && !slices.ContainsFunc(layout, func(d Spec) bool {
			return d.Dir && d.Kind == Derived && len(s.Path) > len(d.Path) && s.Path[:len(d.Path)+1] == d.Path+"/"
		}) {
			out = append(out, s.Path)
		}
	}
	return out
}
