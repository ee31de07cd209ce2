package rebuild

import (
	"io"
	"slices"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// uses are the results a rebuild makes from one ncu export.
type uses struct {
	kernels bool // the kernel table (kernels.md, the summary's kernels)
	regions bool // the run's regions (ncu/regions/, the summary's regions)
	sample  bool // the deep pass's sample by region (ncu/regions-sample/)
	metrics bool // the classification's per-kernel metrics
}

func (u uses) or(o uses) uses {
	return uses{u.kernels || o.kernels, u.regions || o.regions, u.sample || o.sample, u.metrics || o.metrics}
}

// covers reports whether u has every use of o.
func (u uses) covers(o uses) bool { return u.or(o) == u }

// scanned is what one read of an ncu export gave each of its uses, each
// result with its own error.
type scanned struct {
	uses       uses
	kernels    *model.KernelTable
	kernelsErr error
	regions    *facts.RegionReport
	regionsErr error
	sample     *facts.RegionReport
	sampleErr  error
	metrics    map[string]*kernels.Metrics
	metricsErr error
}

// exportReads are a rebuild's reads of its ncu exports: each export is
// read once, at its first use, for every use the rebuild has for it (plan:
// the chosen sources', the sample's and the classification's).
type exportReads struct {
	plan  map[string]uses
	done  map[string]*scanned
	files rundir.Recorded // each export's files
}

// planExports is which results the rebuild makes from each ncu export: the
// kernel table and the run's regions from the export their source names
// (when it is an ncu export), the sample and the classification from the
// deep pass's.
func planExports(rec rundir.Recorded, src sources) *exportReads {
	e := &exportReads{plan: map[string]uses{}, done: map[string]*scanned{}, files: rec}
	if src.kernels.ok && src.kernels.export {
		e.plan[src.kernels.path] = e.plan[src.kernels.path].or(uses{kernels: true})
	}
	if src.regions.ok && src.regions.export {
		e.plan[src.regions.path] = e.plan[src.regions.path].or(uses{regions: true})
	}
	if hasDeepRaw(rec) {
		e.plan[rundir.NcuRaw] = e.plan[rundir.NcuRaw].or(uses{sample: true, metrics: true})
	}
	return e
}

// scan is the read of the run's ncu export rel for want: within a rebuild
// the one read of rel for all its planned uses, otherwise a read for want
// alone.
func (c settings) scan(run *rundir.Run, rel string, want uses) *scanned {
	e := c.exports
	if e == nil {
		return scanExport(run, run.ExportFiles(rel), rel, want, c)
	}
	if s, ok := e.done[rel]; ok && s.uses.covers(want) {
		return s
	}
	s := scanExport(run, e.files.ExportFiles(rel), rel, e.plan[rel].or(want), c)
	e.done[rel] = s
	return s
}

// openExportFile opens a file of the run for openExport; tests count the
// opens through it.
var openExportFile = func(run *rundir.Run, rel string) (io.ReadCloser, error) { return run.OpenFile(rel) }

// openExport opens an ncu export of the run, plain or gzipped; either way it
// is named rel in messages and reports.
func openExport(run *rundir.Run, rel string, opts ncu.Options) (*ncu.Reader, func() error, error) {
	f, err := openExportFile(run, rel)
	if err != nil {
		return nil, nil, err
	}
	return ncu.NewReader(f, rel, opts), f.Close, nil
}

// consumer is one use's handler, and what to do with its outcome.
type consumer struct {
	h      model.Handler
	finish func(err error)
}

// scanExport reads the export rel, its files files, once for the uses u. The reader keeps
// the raw-page columns of every use; each use gets the error it would get
// alone: the open's, its own configuration's, the first malformed row's, or
// its own first bad launch's.
func scanExport(run *rundir.Run, files []string, rel string, u uses, cfg settings) *scanned {
	s := &scanned{uses: u}
	var cs []consumer
	var cols []string
	var configErrs []func() // a use whose configuration is refused, once the export opened
	if u.kernels {
		a := model.NewKernelAggregator()
		cs = append(cs, consumer{ncu.KernelHandler(a), func(err error) {
			if s.kernelsErr = err; err == nil {
				t := a.Table(rel)
				s.kernels = &t
			}
		}})
	}
	addRegions := func(rc regions.Config, rep **facts.RegionReport, rerr *error) {
		a, err := regions.New(rc)
		if err != nil {
			configErrs = append(configErrs, func() { *rerr = err })
			return
		}
		cols = append(cols, ncu.Options{Metrics: regions.RawMetrics(rc.Groups)}.Metrics...)
		cs = append(cs, consumer{a, func(err error) {
			if err == nil {
				*rep, err = a.Finish(rel)
			}
			*rerr = err
		}})
	}
	if u.regions {
		addRegions(runRegionsConfig(cfg.Regions), &s.regions, &s.regionsErr)
	}
	if u.sample {
		addRegions(cfg.Regions, &s.sample, &s.sampleErr)
	}
	if u.metrics {
		a := kernels.NewAccumulator()
		cols = append(cols, kernels.Columns()...)
		cs = append(cs, consumer{a, func(err error) {
			if s.metricsErr = err; err == nil {
				s.metrics = a.Metrics()
			}
		}})
	}

	slices.Sort(cols)
	hs := make([]model.Handler, len(cs))
	for i, c := range cs {
		hs[i] = c.h
	}
	errs, err := scanFiles(run, files, ncu.Options{Metrics: slices.Compact(cols)}, hs...)
	if err != nil {
		s.kernelsErr, s.regionsErr, s.sampleErr, s.metricsErr = err, err, err, err
		return s
	}
	for _, f := range configErrs {
		f()
	}
	for i, err := range errs {
		cs[i].finish(err)
	}
	return s
}

// scanFiles reads the files of one export, one after another, into the same
// handlers (ncu.Scan per file, each named as itself in errors): a handler's
// first error ends its launches, in whichever file. The error is the first
// open's that failed.
func scanFiles(run *rundir.Run, files []string, opts ncu.Options, hs ...model.Handler) ([]error, error) {
	errs := make([]error, len(hs))
	for _, rel := range files {
		r, closeFn, err := openExport(run, rel, opts)
		if err != nil {
			return nil, err
		}
		var live []model.Handler
		var at []int
		for i, h := range hs {
			if errs[i] == nil {
				live = append(live, h)
				at = append(at, i)
			}
		}
		for j, err := range ncu.Scan(r, rel, live...) {
			errs[at[j]] = err
		}
		closeFn()
	}
	return errs, nil
}
