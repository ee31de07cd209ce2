// The rebuild (deepprof report MAIN) in four steps: load reads the run's
// inputs once, analyse derives every fact from them into one result,
// render makes every derived file of it, commit writes the files and the
// manifest's record of them. Load changes nothing at the run's paths (it
// sweeps the staging folder and stages the trace there), analyse does not
// see the run, and commit writes every file and the manifest.

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
// each input chosen once and read once), and commit writes it (the
// sources chosen recorded in the manifest, then the files rendered from
// the one result of the analysis and the manifest's record of them). A
// missing input makes its outputs "missing" in the manifest, with the
// reason; the other outputs are still made.
func rebuild(run *rundir.Run, cfg settings) error {
	if cfg.traced != nil {
		// A trace begun before the rebuild ends its write first: load
		// sweeps the staging folder its temporary file is in.
		err := cfg.traced()
		cfg.traced = func() error { return err }
	}
	in := load(run, cfg)
	res := analyse(in)
	return commit(run, res)
}

// commit writes what the rebuild made (res) into run. Before anything is
// written: no file deepprof did not write is where a derived file goes,
// and the run says which files this rebuild may write before it writes
// one. The trace, begun as load read the timeline (stageTrace), is put in
// place then; every other file is rendered from res.
func commit(run *rundir.Run, res *result) error {
	in := res.in
	cfg := in.cfg
	run.SetSources(in.src.record())
	planned := plannedFiles(res)
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
	c.record(res)
	res.trace = in.publishTrace()
	defer res.trace()
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

// plannedFiles are the derived files the rebuild of res may write: every
// derived file of the layout, and the kernel tables of the region folders
// (render.RegionsDirPaths).
func plannedFiles(res *result) []string {
	out := rundir.DerivedFiles()
	for _, d := range []struct {
		dir string
		rep *facts.RegionReport
	}{{rundir.RegionsDir, res.reg}, {rundir.RegionsSampleDir, res.in.sample}} {
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
// where one cannot be read: the sources chosen and what they hold, the
// timeline with the phases inferred from its kernel stream (the trace,
// begun as it is read, shows them) and the anomalies found reading it.
// The ranges profiled, the warm-up and every figure are analyse's.
type inputs struct {
	cfg   settings // as the run configured them (analyse decides the ranges)
	runID string
	// rec is what the run holds to read: which files are there.
	rec   rundir.Recorded
	swept error // why the staging folder could not be swept
	src   sources

	cupti bool // the run has CUPTI record files
	tl    *timeline.Timeline
	tlErr error
	// inferred are the notes of the phases inferred from the timeline's
	// kernel stream (phases.InferPhases): how they were found, or why
	// not; phasesFound says they were found.
	inferred    []string
	phasesFound bool
	// staged is the trace of tl being written (stageTrace); nil: none.
	staged *rundir.Staged
	// anomalies are the recording's anomalies that change its numbers.
	anomalies []string

	// tab and reg are the kernel table and the run's regions where their
	// source is a file; analyse makes a timeline source's (result).
	tab      *model.KernelTable
	kerr     error
	rules    map[string][]facts.Rule
	rulesErr error
	reg      *facts.RegionReport
	rerr     error
	sample   *facts.RegionReport
	serr     error
	files    summaryFiles // env.json, the stages' files, the deep pass's metrics

	oracle    *workload.Figures
	oracleErr error
}

// readTimeline is the run's CUPTI timeline; nil where it has none or it could
// not be read (tlErr says why).
func (in *inputs) readTimeline() *timeline.Timeline {
	if in.tlErr != nil {
		return nil
	}
	return in.tl
}

// load reads the run's inputs once, the manifest first brought in line
// with MAIN (rundir.Run.MatchFiles): the sources chosen, each export read
// in one pass for every result made from it.
func load(run *rundir.Run, cfg settings) *inputs {
	rec, swept := run.MatchFiles()
	in := &inputs{runID: rec.Manifest.RunID, rec: rec, swept: swept, cupti: hasCupti(rec)}
	if in.cupti {
		in.loadTimeline(run, cfg)
	}
	in.staged = stageTrace(run, in.readTimeline(), cfg)
	in.src = chooseSources(rec)
	cfg.exports = planExports(rec, in.src)
	in.cfg = cfg

	if in.cupti && rec.Present[rundir.OracleJSON] {
		// The independent check's figures of the CUPTI run, where it ran.
		in.oracle, in.oracleErr = rundir.ParsePlain(run, rundir.OracleJSON, workload.ReadFigures)
	}
	in.anomalies = slices.Clone(rec.CuptiAnomalies)
	if in.tl != nil {
		in.anomalies = append(in.anomalies, in.tl.Anomalies(cfg.Domain)...)
	}
	in.tab, in.kerr = in.src.kernels.load(run, cfg)
	in.rules, in.rulesErr = readRules(run, rec)
	in.reg, in.rerr = in.src.regions.load(run, cfg)
	in.sample, in.serr = sampleRegions(run, rec, cfg)
	in.files = readSummaryFiles(run, in)
	return in
}

// result is every fact the rebuild's files are made from, derived once.
type result struct {
	in *inputs
	// cfg are the inputs' settings with the ranges decided (decideRanges).
	cfg settings
	// notes are what the rebuild says in the manifest (the ranges decided,
	// the recording's anomalies), in order; errs the inputs that fail it.
	notes []rundir.Note
	errs  []error
	// trace waits for the trace, begun as load read the timeline, puts
	// it in place and gives its error (publishTrace).
	trace func() error
	// steady is the one warm-up decision on the timeline's ranges; nil
	// without a timeline.
	steady *phases.Steady
	// tab and reg are the kernel table and the run's regions: read by
	// load, or made of the timeline.
	tab  *model.KernelTable
	kerr error
	reg  *facts.RegionReport
	rerr error
	// rules are ncu's rules by the kernel table's spelling of each name,
	// for kernels.json and the summary alike.
	rules   map[string][]facts.Rule
	samples map[string]*facts.Sample
	phases  *facts.PhaseReport
	check   *oracleCheckFile
	// checkErr is why the check against the oracle could not be made.
	checkErr error
	// configNS is each kernel's time by launch configuration over the
	// kernel table's launches (kernels.json's, warm-up included), where
	// the summary has it over its own (summary.Inputs.ConfigNS;
	// configTimesOf makes both).
	configNS map[string]map[string]float64
	overhead *render.CuptiOverhead
	summary  *facts.Summary
	// summaryErr is why the summary could not be made (a figure that is
	// not finite).
	summaryErr error
	summaryIn  summary.Inputs
}

// analyse derives every fact from the inputs: the ranges the kernel table
// covers, the one warm-up decision, what the timeline's sources make of
// them, the phases in steady state, the check against the oracle, the
// summary with its claims.
func analyse(in *inputs) *result {
	res := &result{in: in, cfg: in.cfg}
	tl := in.readTimeline()
	rangesNote, rangesErr := decideRanges(tl, &res.cfg, in.phasesFound)
	on := onTimelineOf(in, res.cfg)
	res.steady = on.steady
	res.tab, res.kerr = in.src.kernels.made(in.tab, in.kerr, on)
	res.reg, res.rerr = in.src.regions.made(in.reg, in.rerr, on)
	var phasesDone func() *facts.PhaseReport
	if tl != nil {
		// Begun once the regions are made, not beside them: each holds
		// a working set that grows with the run's ranges, and the
		// rebuild's peak is then the larger of the two, not their sum.
		phasesDone = startPhases(tl, res.cfg, res.steady)
	}
	s, modelErr := summaryInputs(in, res, on)
	res.overhead = cuptiOverhead(cuptiReport(in.src, s), stage1Report(s), in.oracle)
	res.notes = notesOf(in, res, rangesNote)
	res.errs = errsOf(in, res, s, rangesErr, modelErr)

	res.rules = byTableNames(in.rules, res.tab)
	if res.reg != nil && !in.src.regions.every {
		res.reg.Sample = "no timeline export with NVTX ranges (" + rundir.NcuTimingRaw + ") is in this run, so the run's regions are the deep pass's: a few launches of each top kernel, not the run's totals"
	}
	if tl != nil {
		res.phases = phasesDone()
		if in.oracleErr != nil {
			res.checkErr = in.oracleErr
		} else if in.oracle != nil {
			res.check, res.checkErr = oracleCheck(in.oracle, tl, res.reg, res.cfg.isCommunication())
		}
	}
	res.samples = summary.Samples(s.Metrics, res.configNS)
	s.Anomalies = in.anomalies
	if s.Rules = res.rules; in.rulesErr != nil {
		s.RulesMissing = in.rulesErr.Error()
	}
	s.Phases = res.phases
	if tl != nil {
		s.Decode = phases.DecodeSteps(tl, res.steady, res.cfg.Domain, res.cfg.Summary.Phases)
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
	res.summary = summary.Build(s, res.cfg.Summary)
	// A figure that is not finite is refused before any of the summary's
	// files is written: none is made rather than one full of NaN.
	if err := input.CheckFinite(res.summary); err != nil {
		res.summaryErr = fmt.Errorf("%s: %w: an input holds values no real run has (a figure made from them passes the largest float64)", rundir.SummaryJSON, err)
	}
	return res
}

// notesOf are the manifest's notes of a rebuild, in order: the ranges
// decided (rangesNote, when not the configured ones), the recording's
// anomalies, the phases inferred, the timeline's notices, the steady
// state held by measurements.
func notesOf(in *inputs, res *result, rangesNote string) []rundir.Note {
	var notes []rundir.Note
	add := func(texts ...string) {
		for _, t := range texts {
			notes = append(notes, rundir.Note{Text: t})
		}
	}
	if rangesNote != "" {
		add(rangesNote)
	}
	for _, a := range in.anomalies {
		notes = append(notes, rundir.Note{Kind: rundir.NoteAnomaly, Text: anomalyNote + a})
	}
	add(in.inferred...)
	if in.tl != nil {
		add(in.tl.Notices()...)
		if res.steady.MeasuredSteady() {
			add("steady state: every steady repeat of a stage held one of the library's measurements, or overlapped one of a peer process's (the GPU's queue drained, a launch replayed, a collective waiting): they stay in its figures, measured")
		}
	}
	return notes
}

// errsOf are the inputs that fail a rebuild: the staging folder that
// could not be swept, the ranges that cannot be decided, a source that is
// there and cannot be read or made (the kernels, ncu's rules, the
// regions, the timeline, the deep pass's sample), the summary's files
// that are there and cannot be read (s, modelErr); in this order, the
// order deepprof report has always said them in.
func errsOf(in *inputs, res *result, s summary.Inputs, rangesErr, modelErr error) []error {
	var errs []error
	add := func(ok bool, err error) {
		if ok && err != nil {
			errs = append(errs, err)
		}
	}
	add(true, in.swept)
	add(true, rangesErr)
	add(in.src.kernels.ok, res.kerr)
	add(in.rulesErr != errNoDetails, in.rulesErr)
	add(in.src.regions.ok, res.rerr)
	add(in.cupti, in.tlErr)
	add(hasDeepRaw(in.rec), in.serr)
	add(true, modelErr)
	// The workload's report is there and cannot be read: the summary goes
	// without stages, and the rebuild says so in its exit.
	add(s.WorkloadMissing != "" && in.src.stages.ok && in.src.stages.path == rundir.Stage1Report, errors.New(s.WorkloadMissing))
	// Stage 1's report is there and cannot be read: the stages keep the
	// CUPTI run's own times, said in the summary and the exit.
	add(s.AloneMissing != "", errors.New(s.AloneMissing))
	return errs
}

// renderFiles renders every derived file but the summary's pages and
// report.md, from the result alone.
func renderFiles(res *result) []rundir.Output {
	in := res.in
	var out []rundir.Output
	out = append(out, regionsOutput(rundir.RegionsDir, rundir.RegionsMD, rundir.RegionsJSON, res.reg, res.rerr))
	out = append(out, timelineOutputs(res)...)
	out = append(out, regionsOutput(rundir.RegionsSampleDir, rundir.RegionsSampleMD, rundir.RegionsSampleJSON, in.sample, in.serr))
	out = append(out, kernelsOutputs(res.tab, res.kerr, res.cfg.TopN, kernelScope(res), res.rules, res.samples)...)
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
// analysis is made: they only read the timeline and the warm-up decision.
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

// record notes what the rebuild found, and marks the run partial for a
// recording whose anomalies change its numbers.
func (c *committer) record(res *result) {
	in := res.in
	for _, n := range res.notes {
		c.run.AddNote(n)
	}
	if k := len(in.anomalies); k > 0 {
		c.run.MarkRebuildPartial(fmt.Sprintf("the recording holds %d %s that change%s its numbers (the summary's Anomalies section and the manifest's notes say which)",
			k, plural(k, "anomaly", "anomalies"), plural(k, "s", "")))
	}
	for _, p := range in.tlProcesses() {
		c.run.Record(p.file, p.status, p.reason)
	}
	c.errs = append(c.errs, res.errs...)
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
	f := &render.CuptiFacts{Files: in.rec.CuptiFiles, Trace: rundir.TimelineTrace, Overhead: res.overhead, OraclePath: rundir.OracleJSON,
		OracleRan: in.oracle != nil || in.oracleErr != nil}
	if failed[rundir.OracleCheckJSON] == nil {
		f.Check = res.check
	}
	return f
}

// cuptiReport is the CUPTI run's workload report where the stages come
// from it (s: the summary's inputs), else nil.
func cuptiReport(src sources, s summary.Inputs) *workload.Report {
	if src.stages.ok && src.stages.path == rundir.TimelineReport {
		return s.Workload
	}
	return nil
}

// stage1Report is stage 1's workload report where it stands beside the
// CUPTI run's (s: the summary's inputs), else nil.
func stage1Report(s summary.Inputs) *workload.Report {
	if !s.AloneDetached {
		return s.Alone
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
