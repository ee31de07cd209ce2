// The rebuild (deepprof report MAIN) in four steps: load the run's inputs
// once, analyse them into one result, render every derived file from it,
// commit the files and the manifest's record of them. Load changes nothing
// at the run's paths (it sweeps the staging folder and stages the trace
// there); commit writes every file and the manifest.

package rebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// removedNote starts the words of the note of the derived files a rebuild
// removed (rundir.NoteRemoved: the next rebuild drops it, it describes
// that rebuild only).
const removedNote = "rebuild: removed "

// rebuild writes every derived file of a run from the raw outputs in it,
// with no GPU: it is `deepprof report MAIN`. It goes into the run twice:
// load reads it, changing nothing at its paths (the manifest brought in
// line with MAIN first: what it lists and is not there is absent; then
// each input chosen once, recorded as the manifest's sources, and read
// once), and commit writes it (the files rendered from the one result of
// the analysis, then the manifest's record of them). A missing input makes its outputs "missing" in the
// manifest, with the reason; the other outputs are still made.
func rebuild(run *rundir.Run, cfg settings) error {
	if cfg.traced != nil {
		// A trace begun before the rebuild ends its write first: load
		// sweeps the staging folder its temporary file is in.
		err := cfg.traced()
		cfg.traced = func() error { return err }
	}
	in := load(run, cfg)
	return commit(run, in, func() *result { return analyse(in) })
}

// commit writes what the rebuild of in makes into run. Before anything is
// written: no file deepprof did not write is where a derived file goes,
// and the run says which files this rebuild may write before it writes
// one. The trace, begun as load read the timeline (stageTrace), is put in
// place then; every other file is rendered from analyse's result.
func commit(run *rundir.Run, in *inputs, analyse func() *result) error {
	cfg := in.cfg
	planned := plannedFiles(in)
	if err := run.CheckDerived(planned); err != nil {
		return &NotRebuiltError{errors.Join(err, in.discardTrace(), wait(cfg.traced))}
	}
	run.ClaimPending(planned)
	if cfg.started != nil {
		if err := cfg.started(); err != nil {
			return &NotRebuiltError{errors.Join(err, in.discardTrace(), wait(cfg.traced))}
		}
	}
	c := &committer{run: run, failed: map[string]error{}}
	c.record(in)
	trace := in.publishTrace()
	defer trace()
	res := analyse()
	res.trace = trace
	c.write(renderFiles(res))
	// The summary's pages name the charts and the trace, so they are
	// rendered once those are committed: a chart that could not be
	// written is said missing there.
	c.write(renderSummary(res, c.failed))
	err := c.finish(res)
	if cfg.now == nil {
		return err // the session writes the manifest
	}
	if merr := run.WriteRebuiltManifest(cfg.now()); merr != nil {
		return &ManifestError{errors.Join(err, merr)}
	}
	return errors.Join(err, run.Sweep())
}

// plannedFiles are the derived files the rebuild of in may write: every
// derived file of the layout, and the kernel tables of the region folders
// (render.RegionsDirPaths).
func plannedFiles(in *inputs) []string {
	out := rundir.DerivedFiles()
	for _, d := range []struct {
		dir string
		rep *facts.RegionReport
	}{{rundir.RegionsDir, in.reg}, {rundir.RegionsSampleDir, in.sample}} {
		if d.rep == nil {
			continue
		}
		paths, err := render.RegionsDirPaths(d.rep)
		if err != nil {
			continue // not written: the folder is said missing
		}
		for _, p := range paths {
			out = append(out, d.dir+"/"+p)
		}
	}
	return out
}

// inputs are what a rebuild reads of a run, each once, with the reason
// where one cannot be read.
type inputs struct {
	cfg   settings
	runID string
	// rec is what the run holds to read: which files are there.
	rec rundir.Recorded
	src sources
	// notes are what the reading found to say in the manifest (the ranges
	// decided, the recording's anomalies), in order.
	notes     []rundir.Note
	anomalies []string
	errs      []error // inputs that fail the rebuild

	cupti bool // the run has CUPTI record files
	tl    *timeline.Timeline
	tlErr error
	// staged is the trace of tl being written (stageTrace); nil: none.
	staged *rundir.Staged
	steady *phases.Steady
	// phases waits for the timeline's phases, begun once the regions are
	// read (startPhases); nil without a timeline.
	phases func() *facts.PhaseReport

	tab      *model.KernelTable
	kerr     error
	rules    map[string][]facts.Rule
	rulesErr error
	reg      *facts.RegionReport
	rerr     error
	sample   *facts.RegionReport
	serr     error

	summary summary.Inputs // env.json, the stages, the deep pass's metrics
	// configNS is each kernel's time by launch configuration over the
	// kernel table's launches (kernels.json's, warm-up included), where
	// the summary has it over its own (summary.Inputs.ConfigNS).
	configNS map[string]map[string]float64

	oracle    *workload.Figures
	oracleErr error
	overhead  *render.CuptiOverhead
}

// readTimeline is the run's CUPTI timeline; nil where it has none or it could
// not be read (tlErr says why).
func (in *inputs) readTimeline() *timeline.Timeline {
	if in.tlErr != nil {
		return nil
	}
	return in.tl
}

// note adds notes of no kind (they stay until said otherwise).
func (in *inputs) note(texts ...string) {
	for _, t := range texts {
		in.notes = append(in.notes, rundir.Note{Text: t})
	}
}

// load reads the run's inputs once, the manifest first brought in line
// with MAIN (rundir.Run.MatchFiles): the ranges decided, the sources chosen, each
// export read in one pass for every result made from it.
func load(run *rundir.Run, cfg settings) *inputs {
	cfg.memo = &memo{}
	rec, swept := run.MatchFiles()
	m := rec.Manifest
	in := &inputs{runID: m.RunID, rec: rec}
	if swept != nil {
		in.errs = append(in.errs, swept)
	}
	in.cupti = hasCupti(rec)
	if in.cupti {
		in.tl, in.tlErr = cfg.loadTimeline(run, rec.CuptiFiles)
	}
	tl := in.readTimeline()
	in.staged = stageTrace(run, tl, cfg)
	note, err := decideRanges(tl, &cfg)
	if err != nil {
		in.errs = append(in.errs, err)
	}
	if note != "" {
		in.note(note)
	}
	in.src = chooseSources(rec)
	run.SetSources(in.src.record())
	cfg.exports = planExports(rec, in.src)
	in.cfg = cfg

	if in.cupti {
		if tl != nil {
			in.steady = cfg.steady(tl)
		}
		// The independent check's figures of the CUPTI run, where it ran.
		if rec.Present[rundir.OracleJSON] {
			in.oracle, in.oracleErr = rundir.ParsePlain(run, rundir.OracleJSON, workload.ReadFigures)
		}
	}
	in.anomalies = slices.Clone(rec.CuptiAnomalies)
	if in.tl != nil {
		in.anomalies = append(in.anomalies, in.tl.Anomalies(cfg.Domain)...)
	}
	for _, a := range in.anomalies {
		in.notes = append(in.notes, rundir.Note{Kind: rundir.NoteAnomaly, Text: anomalyNote + a})
	}
	if cfg.memo != nil {
		in.note(cfg.memo.inferred...)
	}
	if in.tl != nil {
		in.note(in.tl.Notices()...)
		if in.steady.MeasuredSteady() {
			in.note("steady state: every steady repeat of a stage held one of the library's measurements, or overlapped one of a peer process's (the GPU's queue drained, a launch replayed, a collective waiting): they stay in its figures, measured")
		}
	}

	in.tab, in.kerr = in.src.kernels.load(run, cfg)
	if in.kerr != nil && in.src.kernels.ok {
		in.errs = append(in.errs, in.kerr)
	}
	in.rules, in.rulesErr = readRules(run, rec)
	if in.rulesErr != nil && in.rulesErr != errNoDetails {
		in.errs = append(in.errs, in.rulesErr)
	}
	in.reg, in.rerr = in.src.regions.load(run, cfg)
	if in.rerr != nil && in.src.regions.ok {
		in.errs = append(in.errs, in.rerr)
	}
	if in.tl != nil {
		// Begun once the regions are read, not beside them: each holds
		// a working set that grows with the run's ranges, and the
		// rebuild's peak is then the larger of the two, not their sum.
		in.phases = startPhases(in.tl, cfg, in.steady)
	}
	if in.cupti && in.tlErr != nil {
		in.errs = append(in.errs, in.tlErr)
	}
	in.sample, in.serr = sampleRegions(run, rec, cfg)
	if in.serr != nil && hasDeepRaw(in.rec) {
		in.errs = append(in.errs, in.serr)
	}
	in.summary = summaryInputs(run, in)
	if in.summary.ConfigNS != nil && in.tl != nil {
		inRanges := model.InRangesOf(cfg.Include)
		in.configNS = configTimes(in.tl, func(_ *timeline.Kernel, l *model.Launch) bool { return inRanges(l) })
	}
	if in.summary.StagesFromRanges && rec.Present[rundir.TimelineModel] {
		// The model facts the program's framework gave; where they come
		// from names the file.
		if mf, err := rundir.Parse(run, rundir.TimelineModel, workload.ReadModelFacts); err != nil {
			in.errs = append(in.errs, err)
		} else {
			mf.From += " (" + rundir.TimelineModel + ")"
			in.summary.ProgramFacts = mf
		}
	}
	if m.Status != rundir.StatusComplete && m.PartialBy != rundir.PartialByRebuild {
		in.summary.SessionPartial = m.Reason
	}
	if in.summary.WorkloadMissing != "" && in.src.stages.ok && in.src.stages.path == rundir.Stage1Report {
		// The workload's report is there and cannot be read: the summary
		// goes without stages, and the rebuild says so in its exit.
		in.errs = append(in.errs, errors.New(in.summary.WorkloadMissing))
	}
	if in.summary.AloneMissing != "" {
		// Stage 1's report is there and cannot be read: the stages keep
		// the CUPTI run's own times, said in the summary and the exit.
		in.errs = append(in.errs, errors.New(in.summary.AloneMissing))
	}
	in.overhead = cuptiOverhead(in.cuptiReport(), in.stage1Report(), in.oracle)
	return in
}

// result is every fact the rebuild's files are made from, derived once.
type result struct {
	in *inputs
	// trace waits for the trace, begun as load read the timeline, puts
	// it in place and gives its error (publishTrace).
	trace func() error
	// rules are ncu's rules by the kernel table's spelling of each name,
	// for kernels.json and the summary alike.
	rules   map[string][]facts.Rule
	samples map[string]*facts.Sample
	phases  *facts.PhaseReport
	check   *oracleCheckFile
	// checkErr is why the check against the oracle could not be made.
	checkErr error
	summary  *facts.Summary
	// summaryErr is why the summary could not be made (a figure that is
	// not finite).
	summaryErr error
	summaryIn  summary.Inputs
}

// analyse derives every fact from the inputs: the phases in steady state,
// the check against the oracle, the summary with its claims.
func analyse(in *inputs) *result {
	res := &result{in: in, rules: byTableNames(in.rules, in.tab)}
	if in.reg != nil && !in.src.regions.every {
		in.reg.Sample = "no timeline export with NVTX ranges (" + rundir.NcuTimingRaw + ") is in this run, so the run's regions are the deep pass's: a few launches of each top kernel, not the run's totals"
	}
	if in.tl != nil {
		res.phases = in.phases()
		if in.oracleErr != nil {
			res.checkErr = in.oracleErr
		} else if in.oracle != nil {
			res.check, res.checkErr = oracleCheck(in.oracle, in.tl, in.reg, in.cfg.isCommunication())
		}
	}
	s := in.summary
	res.samples = summary.Samples(s.Metrics, in.configNS)
	s.Anomalies = in.anomalies
	if s.Rules = res.rules; in.rulesErr != nil {
		s.RulesMissing = in.rulesErr.Error()
	}
	s.Phases = res.phases
	if in.tl != nil {
		s.Decode = phases.DecodeSteps(in.tl, in.steady, in.cfg.Domain, in.cfg.Summary.Phases)
	}
	if res.phases != nil {
		s.Trace = rundir.TimelineTrace
	}
	if in.cupti && in.tlErr != nil {
		s.PhasesMissing = "the CUPTI timeline could not be read: " + in.tlErr.Error()
	}
	if in.sample != nil {
		s.RegionsSampleReport = rundir.RegionsSampleMD
	}
	res.summaryIn = s
	res.summary = summary.Build(s, in.cfg.Summary)
	// A figure that is not finite is refused before any of the summary's
	// files is written: none is made rather than one full of NaN.
	if err := input.CheckFinite(res.summary); err != nil {
		res.summaryErr = fmt.Errorf("%s: %w: an input holds values no real run has (a figure made from them passes the largest float64)", rundir.SummaryJSON, err)
	}
	return res
}

// renderFiles renders every derived file but the summary's pages and
// report.md, from the result alone.
func renderFiles(res *result) []rundir.Output {
	in := res.in
	var out []rundir.Output
	out = append(out, regionsOutput(rundir.RegionsDir, rundir.RegionsMD, rundir.RegionsJSON, in.reg, in.rerr))
	out = append(out, timelineOutputs(res)...)
	out = append(out, regionsOutput(rundir.RegionsSampleDir, rundir.RegionsSampleMD, rundir.RegionsSampleJSON, in.sample, in.serr))
	out = append(out, kernelsOutputs(in.tab, in.kerr, in.cfg.TopN, kernelScope(res), res.rules, res.samples)...)
	if res.summaryErr == nil {
		out = append(out, operatorsOutput(res))
		out = append(out, chartOutputs(res.summary)...)
	}
	return out
}

// regionsOutput is a region report's folder, or why it is missing.
func regionsOutput(dir, md, js string, rep *facts.RegionReport, why error) rundir.Output {
	o := rundir.Output{Rel: dir, IsDir: true, Records: []string{md, js}}
	if why != nil {
		o.Missing = why
		return o
	}
	files, err := render.RegionsDirFiles(rep)
	if err != nil {
		o.Missing, o.Fails = err, true
		return o
	}
	o.Dir = files
	return o
}

// timelineOutputs are the CUPTI timeline's files: the trace, the phases,
// the check against the oracle.
func timelineOutputs(res *result) []rundir.Output {
	in := res.in
	derived := []string{rundir.TimelineTrace, rundir.TimelinePhases, rundir.OracleCheckJSON}
	var out []rundir.Output
	switch {
	case !in.cupti:
		for _, rel := range derived {
			out = append(out, rundir.Output{Rel: rel, Forget: true})
		}
		return out
	case in.tlErr != nil:
		for _, rel := range derived {
			out = append(out, rundir.Output{Rel: rel, Missing: in.tlErr, RemoveNow: true})
		}
		return out
	}
	out = append(out, rundir.Output{Rel: rundir.TimelineTrace, Written: res.trace})
	var ph bytes.Buffer
	out = append(out, jsonOutput(rundir.TimelinePhases, &ph, render.PhasesJSON(&ph, res.phases)))
	switch {
	case res.checkErr != nil:
		out = append(out, rundir.Output{Rel: rundir.OracleCheckJSON, Missing: res.checkErr, Fails: true, RemoveNow: true})
	case res.check == nil:
		out = append(out, rundir.Output{Rel: rundir.OracleCheckJSON, Forget: true})
	default:
		var b bytes.Buffer
		out = append(out, jsonOutput(rundir.OracleCheckJSON, &b, render.OracleCheckJSON(&b, *res.check)))
	}
	return out
}

// stageTrace begins writing the trace of tl (timeline/trace.json.gz) in
// the run's staging folder as soon as load has read tl, which nothing
// changes after: it is made while the other inputs are read and analysed,
// and put in place by commit once the run may be written
// (publishTrace). Nil where there is no timeline, or where the trace is
// the one the session began of it (settings.traced).
func stageTrace(run *rundir.Run, tl *timeline.Timeline, cfg settings) *rundir.Staged {
	if tl == nil || cfg.traced != nil && tl == cfg.read {
		return nil
	}
	return run.Stage(rundir.TimelineTrace, func(w io.Writer) error { return render.TraceGzip(w, tl) })
}

// publishTrace is what waits for the trace and gives its error, as often
// as it is asked: the staged trace put in place, the session's, or none
// for a run with no timeline.
func (in *inputs) publishTrace() func() error {
	switch {
	case in.staged != nil:
		return sync.OnceValue(in.staged.Publish)
	case in.readTimeline() != nil && in.cfg.traced != nil:
		return in.cfg.traced // written of this timeline before the rebuild
	}
	return func() error { return nil }
}

// discardTrace removes the staged trace of a rebuild that writes nothing.
func (in *inputs) discardTrace() error {
	if in.staged == nil {
		return nil
	}
	return in.staged.Discard()
}

// writeTrace starts writing run's trace of tl and returns what waits for
// the write and gives its error (StartTrace: a session begins it as its
// deep pass starts).
func writeTrace(run *rundir.Run, tl *timeline.Timeline) func() error {
	return begin(func() error {
		return run.WriteStream(rundir.TimelineTrace, func(w io.Writer) error { return render.TraceGzip(w, tl) })
	})
}

// begin runs f in a goroutine and returns what waits for its result, as
// often as it is asked.
func begin[T any](f func() T) func() T {
	done := make(chan T, 1)
	go func() { done <- f() }()
	var once sync.Once
	var v T
	return func() T {
		once.Do(func() { v = <-done })
		return v
	}
}

// startPhases finds the timeline's phases (phasesOf) while the rest of the
// inputs are read: they only read the timeline and the warm-up decision.
// The returned func waits for them.
func startPhases(tl *timeline.Timeline, cfg settings, steady *phases.Steady) func() *facts.PhaseReport {
	return begin(func() *facts.PhaseReport { return phasesOf(tl, cfg, steady) })
}

// jsonOutput is a rendered file, or the rendering's error.
func jsonOutput(rel string, b *bytes.Buffer, err error) rundir.Output {
	if err != nil {
		return rundir.Output{Rel: rel, Missing: err, Fails: true}
	}
	return rundir.Output{Rel: rel, Data: b.Bytes()}
}

// kernelsOutputs are kernels.md (the top N, its scope said) and
// kernels.json (every kernel of the table's scope, its contract), or why
// they are missing.
func kernelsOutputs(tab *model.KernelTable, why error, topN int, scope render.KernelScope, rules map[string][]facts.Rule, samples map[string]*facts.Sample) []rundir.Output {
	if why != nil {
		return []rundir.Output{{Rel: rundir.KernelsMD, Missing: why}, {Rel: rundir.KernelsJSON, Missing: why}}
	}
	var md, js bytes.Buffer
	return []rundir.Output{
		jsonOutput(rundir.KernelsMD, &md, render.KernelsMarkdownIn(&md, tab.Top(topN), scope)),
		jsonOutput(rundir.KernelsJSON, &js, render.KernelsJSON(&js, *tab, rules, samples)),
	}
}

// kernelScope is the scope of a kernel table the rebuild made of the
// CUPTI timeline (the profiled ranges it decided, decideRanges), as the
// summary says it, for kernels.md; none for a table of another source.
func kernelScope(res *result) render.KernelScope {
	s := res.summary
	if s == nil || s.Kernels.Scope == "" || res.in.src.kernels.timer != facts.TimedByCUPTI {
		return render.KernelScope{}
	}
	return render.KernelScope{Text: s.Kernels.ScopeText(), OutsideMS: s.Kernels.OutsideMS, Whole: rundir.RegionsMD, Warmup: s.Kernels.Warmup}
}

// operatorsOutput is operators.md: the workload's operator table, or why
// there is none.
func operatorsOutput(res *result) rundir.Output {
	s := res.summary
	var ops []workload.Operator
	if w := res.summaryIn.Workload; w != nil {
		ops = w.Operators
	}
	var b bytes.Buffer
	o := jsonOutput(rundir.OperatorsMD, &b, render.OperatorsMarkdown(&b, res.in.runID, ops, s.Operators))
	switch {
	case s.Operators.NotMade:
		o.Status, o.Reason = rundir.StatusSkipped, s.Operators.Missing
	case s.Operators.Missing != "":
		o.Status, o.Reason = rundir.StatusPartial, s.Operators.Missing
	}
	return o
}

// chartOutputs are the summary's charts, each drawn or skipped with why.
func chartOutputs(s *facts.Summary) []rundir.Output {
	var out []rundir.Output
	for _, c := range drawCharts(s) {
		if c.Missing != "" {
			out = append(out, rundir.Output{Rel: c.Path, Skipped: c.Missing})
		} else {
			out = append(out, rundir.Output{Rel: c.Path, Data: c.SVG})
		}
	}
	return out
}

// renderSummary renders the summary's pages (stakeholder_summary.md,
// report.html, summary.json); failed are the outputs that could not be
// written, so that a chart or the trace that is not there is said missing.
func renderSummary(res *result, failed map[string]error) []rundir.Output {
	rels := []string{rundir.StakeholderSummary, rundir.ReportHTML, rundir.SummaryJSON}
	if res.summaryErr != nil {
		var out []rundir.Output
		for _, rel := range rels {
			out = append(out, rundir.Output{Rel: rel, Missing: res.summaryErr, Fails: true})
		}
		return out
	}
	s := res.summary
	if err := failed[rundir.TimelineTrace]; err != nil {
		s.Trace = ""
	}
	var cs []render.Chart
	for _, c := range drawCharts(s) {
		if err := failed[c.Path]; err != nil {
			c.Missing = err.Error()
		}
		cs = append(cs, c)
	}
	var md, page, js bytes.Buffer
	out := []rundir.Output{
		jsonOutput(rundir.StakeholderSummary, &md, render.SummaryMarkdown(&md, s, cs)),
		jsonOutput(rundir.ReportHTML, &page, render.SummaryHTML(&page, res.in.runID, md.Bytes(), cs)),
		jsonOutput(rundir.SummaryJSON, &js, render.SummaryJSON(&js, s)),
	}
	if gaps := s.Gaps(); len(gaps) > 0 {
		for i := range out[:2] {
			out[i].Status, out[i].Reason = rundir.StatusPartial, "sections without data: "+strings.Join(gaps, "; ")
		}
	}
	return out
}

// committer writes a rebuild's outputs into the run and records each in
// the manifest, collecting what failed.
type committer struct {
	run    *rundir.Run
	errs   []error
	failed map[string]error // outputs that could not be written, by path
}

// record notes what the reading found, and marks the run partial for a
// recording whose anomalies change its numbers.
func (c *committer) record(in *inputs) {
	for _, n := range in.notes {
		c.run.AddNote(n)
	}
	if k := len(in.anomalies); k > 0 {
		c.run.MarkRebuildPartial(fmt.Sprintf("the recording holds %d %s that change%s its numbers (the summary's Anomalies section and the manifest's notes say which)",
			k, plural(k, "anomaly", "anomalies"), plural(k, "s", "")))
	}
	for _, p := range in.tlProcesses() {
		c.run.Record(p.file, p.status, p.reason)
	}
	c.errs = append(c.errs, in.errs...)
}

// write commits each output and records it.
func (c *committer) write(outs []rundir.Output) {
	c.errs = append(c.errs, c.run.Commit(outs, c.failed)...)
}

// finish removes what an earlier rebuild made from a source that now
// fails, marks the run partial where derived files are not made from their
// sources, and writes report.md from the manifest as it now stands.
func (c *committer) finish(res *result) error {
	run := c.run
	if res.summaryErr != nil {
		// A run without its summary is not complete.
		run.MarkRebuildPartial("the summary could not be made: " + res.summaryErr.Error())
	}
	if removed, err := run.RemoveStale(); err != nil {
		c.errs = append(c.errs, err)
	} else if len(removed) > 0 {
		run.AddNote(rundir.Note{Kind: rundir.NoteRemoved,
			Text: fmt.Sprintf("%s%s, made earlier from a source that now fails (the manifest says why)", removedNote, strings.Join(removed, ", "))})
	}
	if _, err := run.RemovePending(); err != nil {
		c.errs = append(c.errs, err)
	}
	run.CheckPresence()
	// One source that fails feeds several files: say it once (the same
	// error, or one that wraps it).
	var once []error
	for _, e := range c.errs {
		if e != nil && !slices.ContainsFunc(once, func(o error) bool { return errors.Is(e, o) || errors.Is(o, e) }) {
			once = append(once, e)
		}
	}
	partial := func() {
		// A run rebuilt in part is not complete: its derived files are not
		// all made from its sources (the next rebuild clears this mark).
		run.MarkRebuildPartial("derived files not made from their sources (" + rundir.ReportMD + " says which and why)")
	}
	if len(once) > 0 {
		partial()
	}
	var b bytes.Buffer
	err := render.IndexMarkdown(&b, run.Manifest(), render.CuptiSection(cuptiFacts(res, c.failed)))
	if err == nil {
		err = run.Write(rundir.ReportMD, b.Bytes())
	}
	if err != nil {
		// report.md says why the others are partial: without it, say so
		// in the manifest, which is written after this.
		once = append(once, err)
		partial()
	}
	return errors.Join(once...)
}

// cuptiFacts are report.md's facts of the CUPTI run; nil without one.
func cuptiFacts(res *result, failed map[string]error) *render.CuptiFacts {
	in := res.in
	if !in.cupti {
		return nil
	}
	f := &render.CuptiFacts{Files: in.rec.CuptiFiles, Trace: rundir.TimelineTrace, Overhead: in.overhead, OraclePath: rundir.OracleJSON,
		OracleRan: in.oracle != nil || in.oracleErr != nil}
	if failed[rundir.OracleCheckJSON] == nil {
		f.Check = res.check
	}
	return f
}

// cuptiReport is the CUPTI run's workload report where the stages come
// from it (read once, by summaryInputs), else nil.
func (in *inputs) cuptiReport() *workload.Report {
	if in.src.stages.ok && in.src.stages.path == rundir.TimelineReport {
		return in.summary.Workload
	}
	return nil
}

// stage1Report is stage 1's workload report where it stands beside the
// CUPTI run's (read once, by summaryInputs), else nil.
func (in *inputs) stage1Report() *workload.Report {
	if !in.summary.AloneDetached {
		return in.summary.Alone
	}
	return nil
}

// processRecord is a CUPTI record file's status in the manifest.
type processRecord struct {
	file, reason string
	status       rundir.Status
}

// tlProcesses are the record files the timeline read, each complete or
// cut short.
func (in *inputs) tlProcesses() []processRecord {
	if in.tl == nil {
		return nil
	}
	var out []processRecord
	for _, p := range in.tl.Processes {
		// one entry a record file, plain or gzipped (rundir.Run.Stored)
		file := strings.TrimSuffix(p.File, ".gz")
		if p.Truncation != "" {
			out = append(out, processRecord{file, "cut short (" + p.Truncation + "): the process ended without writing its last records (a crash or a kill); what it flushed before is kept", rundir.StatusPartial})
		} else {
			out = append(out, processRecord{file, "", rundir.StatusComplete})
		}
	}
	return out
}
