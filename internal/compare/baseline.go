// Baselines: a run's performance kept as a golden file (see the package
// documentation, "Baselines").

package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// Format names the file format and its version: the value of "format".
// Version 3 adds the spread between runs (between_runs); version 2 added
// each stage's GPU work, the kept kernels' spread and the gate. Older
// files are read as ones without them: a FormatV2 file gates on its one
// run, a FormatV1 file's stages are judged by their walls alone.
const Format = "deepprof-baseline/3"

// FormatV2 and FormatV1 are the earlier versions, still read.
const (
	FormatV2 = "deepprof-baseline/2"
	FormatV1 = "deepprof-baseline/1"
)

// Fields says what each field of a baseline file holds: written into the
// file as "about", for whoever reads it.
var Fields = map[string]string{
	"stages":               "each stage's wall time over the run's repeats, after the warm-up rule (the first repeats over 1.5x the median of the others, per step for repeats of several steps, with 3 or more, are dropped): n repeats used, mean_ms and sd_ms (sample standard deviation)",
	"kernels.top":          "how many kernels the baseline keeps, by total time (deepprof baseline --top N; 0 keeps all)",
	"kernels.count":        "how many kernels the run listed in kernels.json, before that cut",
	"kernels.total_ms":     "the summed time of those kernels: a kernel that appears in a later run is a regression when its time exceeds the tolerance's share of this",
	"kernels.rows":         "the kept kernels: kernel_name, device, total_ms over every launch, calls",
	"regions":              "NVTX region totals: total_ms and kernel_count, each inclusive of nested regions",
	"regions_every_launch": "true: the regions count every launch of the run's timeline; false: only the deep pass's sample of launches",
	"shape":                "the workload's prompt and generated tokens and batch, from its report; a run of another shape is not compared with this baseline",
	"kernels_from":         "the file the kernel table came from, and whether it counts every launch; a run whose kernels come from another kind of source is not compared with this baseline",
	"mfu":                  "model FLOPs utilization by scope (model, prefill, decode), fractions of the GPU's peak; null when not available",
	"program":              "the profiled program's name (config.yaml's workload.name); where no model names the runs, a run of another program is not compared with this baseline",
	"work":                 "each stage's GPU work, which tells a wall the host moved from one the GPU did: kernel_ms, busy_ms (null: unknown), launches and gap_ms per steady-state instance (from: phases) or over a pass (from: regions, instances 0), host_us_per_launch, and launch_bound (null: unknown) with bound_why",
	"kernels.spread":       "how the kept kernels' launch durations vary, where the run recorded it (min_ms, median_ms, max_ms, stddev_ms): a kernel's change counts only beyond twice the spread it gives its total",
	"between_runs":         "where the baseline was made of several runs of the program, each its own process (deepprof baseline MAIN RUN...): their run ids (MAIN's first: every other figure is MAIN's), and the spread between them (n runs, min_ms and max_ms) of each stage's mean and each kept kernel's total; a later run's stage or kernel counts as changed only beyond that spread, by more than the tolerance (and a kernel's floor) of its nearest edge",
	"gate":                 "the gate a comparison with this baseline uses when it asks for none (deepprof baseline --gate; deepprof diff --gate wins over it): host, a stage whose wall the host alone moved fails (as deepprof diff --gate host); gpu or absent, it is reported",
}

// DefaultTop is how many kernels a baseline keeps, by total time.
const DefaultTop = 20

// Baseline is the file: what a run's performance was.
type Baseline struct {
	Format string `json:"format"`
	// About says what each field holds, in the file itself (Fields); it
	// is written, and not read back.
	About map[string]string `json:"about,omitempty"`
	RunID string            `json:"run_id"`
	Model string            `json:"model,omitempty"`
	// Program is the profiled program's name (Summary.Program).
	Program string `json:"program,omitempty"`
	Device  string `json:"device,omitempty"`
	// Shape is the workload's tokens and batch (Summary.Shape).
	Shape string `json:"shape,omitempty"`
	// KernelsFrom is where the kernel table came from (Summary.KernelsFrom).
	KernelsFrom *rundir.Source     `json:"kernels_from,omitempty"`
	Stages      []model.StageTimes `json:"stages"`
	Kernels     Kernels            `json:"kernels"`
	Regions     []RegionTotals     `json:"regions"`
	// RegionsEveryLaunch says Regions count every launch of the timing
	// pass (the run's summary.json), not the deep pass's sample.
	RegionsEveryLaunch bool `json:"regions_every_launch"`
	MFU                *MFU `json:"mfu"` // null when the run had no summary.json
	// Work is each stage's GPU work, in the order of Stages, where the run
	// had figures for it.
	Work []StageWork `json:"work,omitempty"`
	// Gate is the gate a comparison with this baseline uses when it asks
	// for none (GatesHost): model.GateHost, a wall the host moved fails;
	// model.GateGPU or "", it is reported.
	Gate string `json:"gate,omitempty"`
	// BetweenRuns is the spread between the runs the baseline was made
	// of (FromRuns); nil for one run.
	BetweenRuns *BetweenRuns `json:"between_runs,omitempty"`

	// Source is where it came from (a run directory or a baseline file),
	// for reports; not written.
	Source string `json:"-"`
}

// Kernels are the run's top kernels by total time.
type Kernels struct {
	Top     int                  `json:"top"`      // the cut asked for
	Count   int                  `json:"count"`    // kernels the run listed (kernels.json)
	TotalMS float64              `json:"total_ms"` // their summed time: the base of the appeared rule
	Rows    []model.KernelTotals `json:"rows"`
	// Spread is the kept kernels' launch spread, where recorded.
	Spread []KernelSpread `json:"spread,omitempty"`
}

// KernelSpread is one kept kernel's launch spread.
type KernelSpread struct {
	Name   string         `json:"kernel_name"`
	Device model.DeviceID `json:"device"`
	model.Spread
}

// BetweenRuns is how a baseline's figures varied between the runs it was
// made of, each its own process of one program: the spread of each
// stage's mean and each kept kernel's total over the runs that have it
// (kept where two or more do).
type BetweenRuns struct {
	Runs    []string        `json:"runs"` // their run ids, the baseline's own first
	Stages  []StageBetween  `json:"stages"`
	Kernels []KernelBetween `json:"kernels"`
}

// StageBetween is one stage's mean's spread between runs.
type StageBetween struct {
	Stage string `json:"stage"`
	model.Between
}

// KernelBetween is one kept kernel's total's spread between runs.
type KernelBetween struct {
	Name   string         `json:"kernel_name"`
	Device model.DeviceID `json:"device"`
	model.Between
}

// Stage is the spread of stage name's mean; false where none is kept (or
// there is no spread, b nil).
func (b *BetweenRuns) Stage(name string) (model.Between, bool) {
	if b == nil {
		return model.Between{}, false
	}
	for _, st := range b.Stages {
		if st.Stage == name {
			return st.Between, true
		}
	}
	return model.Between{}, false
}

// Kernel is the spread of a kernel's total on its device; false where none
// is kept.
func (b *BetweenRuns) Kernel(name string, device model.DeviceID) (model.Between, bool) {
	if b == nil {
		return model.Between{}, false
	}
	for _, k := range b.Kernels {
		if k.Name == name && k.Device == device {
			return k.Between, true
		}
	}
	return model.Between{}, false
}

// StageWork is one stage's GPU work in a baseline.
type StageWork struct {
	Stage string `json:"stage"`
	facts.StageWork
}

// FromRun reads the run directory dir and keeps its DefaultTop kernels.
func FromRun(dir string) (*Baseline, error) { return FromRunTop(dir, DefaultTop) }

// FromRunTop reads the run directory dir and keeps its top kernels (all
// when top <= 0). A run without one of the files compared (stage1/report.json,
// kernels.json, ncu/regions/report.json) has no baseline: the error says
// which are missing. summary.json is optional.
func FromRunTop(dir string, top int) (*Baseline, error) {
	return fromRun(dir, top, false)
}

// FromRunAllowPartial is FromRunTop for a run that is not complete (a
// stopped session, a partial or stale file): deepprof baseline
// --allow-partial.
func FromRunAllowPartial(dir string, top int) (*Baseline, error) {
	return fromRun(dir, top, true)
}

func fromRun(dir string, top int, allowPartial bool) (*Baseline, error) {
	s, err := loadWhole(dir, allowPartial)
	if err != nil {
		return nil, err
	}
	return FromSummary(s, top), nil
}

// loadWhole loads the run directory dir with every part a baseline keeps;
// one that is not complete only when allowPartial.
func loadWhole(dir string, allowPartial bool) (*Summary, error) {
	s, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if err := s.Sound(); err != nil && !allowPartial {
		return nil, err
	}
	if len(s.Missing) > 0 {
		var files []string
		for _, m := range s.Missing {
			files = append(files, m.File)
		}
		return nil, fmt.Errorf("%s: no %s: a baseline needs the run's stage times, kernels and regions",
			dir, strings.Join(files, ", no "))
	}
	return s, nil
}

// ErrNotOneProgram is the error of a baseline of several runs that are not
// runs of one program on one setup, or that name one run twice.
var ErrNotOneProgram = errors.New("not several runs of one program")

// FromRuns is the baseline of several runs of one program, each its own
// process (deepprof baseline MAIN RUN...): the first run's baseline
// (FromRunTop; allowPartial as FromRunAllowPartial), with the spread
// between all of them of each stage's mean and each kept kernel's total
// (BetweenRuns). Runs of another setup (SetupDifferences) or one run named
// twice (by its run id) are refused (ErrNotOneProgram). One run is
// FromRunTop's baseline.
func FromRuns(dirs []string, top int, allowPartial bool) (*Baseline, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no run: a baseline is made of one run or more")
	}
	runs := make([]*Summary, len(dirs))
	for i, d := range dirs {
		s, err := loadWhole(d, allowPartial)
		if err != nil {
			return nil, err
		}
		runs[i] = s
	}
	b := FromSummary(runs[0], top)
	if len(runs) == 1 {
		return b, nil
	}
	b.BetweenRuns = &BetweenRuns{Stages: []StageBetween{}, Kernels: []KernelBetween{}}
	for i, s := range runs {
		if diffs := SetupDifferences(runs[0], s); len(diffs) > 0 {
			return nil, fmt.Errorf("%s: %w: %s (run A is %s, run B this one); a baseline of several runs is of one program on one setup",
				s.Source, ErrNotOneProgram, strings.Join(diffs, "; "), runs[0].Source)
		}
		same := func(o *Summary) bool {
			return (s.RunID != "" && o.RunID == s.RunID) || filepath.Clean(o.Source) == filepath.Clean(s.Source)
		}
		if j := slices.IndexFunc(runs[:i], same); j >= 0 {
			return nil, fmt.Errorf("%s: %w: it is run %s, as %s is: name each run once", s.Source, ErrNotOneProgram, input.EscapeName(s.RunID), runs[j].Source)
		}
		b.BetweenRuns.Runs = append(b.BetweenRuns.Runs, s.RunID)
	}
	for _, st := range b.Stages {
		var means []float64
		for _, s := range runs {
			if i := slices.IndexFunc(s.Stages, func(o model.StageTimes) bool { return o.Name == st.Name }); i >= 0 && s.Stages[i].N > 0 {
				means = append(means, s.Stages[i].MeanMS)
			}
		}
		if len(means) >= 2 {
			b.BetweenRuns.Stages = append(b.BetweenRuns.Stages, StageBetween{Stage: st.Name, Between: model.NewBetween(means)})
		}
	}
	for _, k := range b.Kernels.Rows {
		var totals []float64
		for _, s := range runs {
			if i := slices.IndexFunc(s.Kernels, func(o model.KernelTotals) bool { return o.Name == k.Name && o.Device == k.Device }); i >= 0 {
				totals = append(totals, s.Kernels[i].TotalMS)
			}
		}
		if len(totals) >= 2 {
			b.BetweenRuns.Kernels = append(b.BetweenRuns.Kernels, KernelBetween{Name: k.Name, Device: k.Device, Between: model.NewBetween(totals)})
		}
	}
	return b, nil
}

// FromSummary keeps the numbers of s that a baseline holds, with its top
// kernels (all when top <= 0).
func FromSummary(s *Summary, top int) *Baseline {
	b := &Baseline{Format: Format, About: Fields, Source: s.Source, RunID: s.RunID, Model: s.Model, Program: s.Program, Device: s.Device, MFU: s.MFU,
		Shape: s.Shape, Stages: []model.StageTimes{}, Regions: []RegionTotals{}}
	if s.KernelsFrom.Path != "" {
		from := s.KernelsFrom
		b.KernelsFrom = &from
	}
	for _, st := range s.Stages {
		b.Stages = append(b.Stages, model.StageTimes{Name: st.Name, Summary: st.Summary})
	}
	ks := s.Kernels
	if top > 0 && len(ks) > top {
		ks = ks[:top]
	}
	b.Kernels = Kernels{Top: max(top, 0), Count: len(s.Kernels), TotalMS: s.KernelMS, Rows: append([]model.KernelTotals{}, ks...)}
	for _, k := range ks {
		if sp, ok := s.Spreads[kernelKey{k.Name, k.Device}]; ok {
			b.Kernels.Spread = append(b.Kernels.Spread, KernelSpread{Name: k.Name, Device: k.Device, Spread: sp})
		}
	}
	for _, st := range s.Stages {
		if w, ok := s.Work[st.Name]; ok {
			b.Work = append(b.Work, StageWork{Stage: st.Name, StageWork: w})
		}
	}
	if s.GateHost {
		b.Gate = model.GateHost
	}
	b.BetweenRuns = s.BetweenRuns
	if s.EveryLaunchRegions != nil {
		b.Regions, b.RegionsEveryLaunch = append(b.Regions, s.EveryLaunchRegions...), true
	} else {
		b.Regions = append(b.Regions, s.Regions...)
	}
	return b
}

// Summary is the baseline as one side of a comparison.
func (b *Baseline) Summary() *Summary {
	s := &Summary{Source: b.Source, RunID: b.RunID, Model: b.Model, Program: b.Program, Device: b.Device, Shape: b.Shape,
		Kernels: b.Kernels.Rows, KernelMS: b.Kernels.TotalMS, Regions: b.Regions, MFU: b.MFU}
	if b.RegionsEveryLaunch {
		s.EveryLaunchRegions = b.Regions
	}
	if b.KernelsFrom != nil {
		s.KernelsFrom = *b.KernelsFrom
	}
	s.Stages = append(s.Stages, b.Stages...)
	for _, k := range b.Kernels.Spread {
		if s.Spreads == nil {
			s.Spreads = map[kernelKey]model.Spread{}
		}
		s.Spreads[kernelKey{k.Name, k.Device}] = k.Spread
	}
	for _, w := range b.Work {
		if s.Work == nil {
			s.Work = map[string]facts.StageWork{}
		}
		s.Work[w.Stage] = w.StageWork
	}
	s.GateHost = b.Gate == model.GateHost
	s.BetweenRuns = b.BetweenRuns
	return s
}

// Write writes the baseline as indented JSON.
func (b *Baseline) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(b)
}

// Read reads and checks a baseline file; errors name it and, for JSON that
// does not parse or has a wrong type, the line.
func Read(r io.Reader, name string) (*Baseline, error) {
	data, err := input.ReadAll(r, name)
	if err != nil {
		return nil, err
	}
	// An editor's UTF-8 byte-order mark is no part of the JSON; its
	// offsets and lines are the same without it.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s:1: empty: a baseline file is the JSON deepprof baseline writes (or give a run directory)", name)
	}
	if err := input.NoDuplicateKeys(data, name); err != nil {
		return nil, err // a second "stages" would switch the stage comparison off
	}
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&b); err != nil {
		return nil, positioned(name, data, err)
	}
	if b.Format != Format && b.Format != FormatV2 && b.Format != FormatV1 {
		return nil, fmt.Errorf("%s:%d: format %q: want %q, %q or %q (a file written by deepprof baseline)", name, lineOf(data, `"format"`, ""), b.Format, Format, FormatV2, FormatV1)
	}
	var errs []error
	bad := func(section, item, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: "+format, append([]any{name, lineOf(data, section, item)}, args...)...))
	}
	ok := func(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }
	// Each stage, kernel (on its device) and region once: a second row
	// would be compared twice, or silently win over the first.
	seen := map[string]bool{}
	once := func(section, kind, key, item string) {
		if seen[kind+"\x00"+key] {
			errs = append(errs, fmt.Errorf("%s:%d: %s %q is listed twice: a baseline holds each once (write it again with deepprof baseline)",
				name, lineOfSecond(data, section, `"`+item+`"`), kind, item))
		}
		seen[kind+"\x00"+key] = true
	}
	for _, st := range b.Stages {
		if st.Name == "" || st.N < 1 || !ok(st.MeanMS) || !ok(st.SDMS) {
			bad(`"stages"`, `"`+st.Name+`"`, "stage %q: want a name, n >= 1, mean_ms and sd_ms >= 0", st.Name)
		}
		once(`"stages"`, "stage", st.Name, st.Name)
	}
	rowErrs := len(errs)
	for _, k := range b.Kernels.Rows {
		if k.Name == "" || !ok(k.TotalMS) || k.Device < 0 || k.Calls < 0 {
			bad(`"kernels"`, `"`+k.Name+`"`, "kernel %q: want a kernel_name, total_ms >= 0, device >= 0 and calls >= 0", k.Name)
		}
		once(`"kernels"`, "kernel", fmt.Sprintf("%d\x00%s", k.Device, k.Name), k.Name)
	}
	if key, msg := b.Kernels.totalErr(); msg != "" && len(errs) == rowErrs { // a row in error is said alone
		bad(`"kernels"`, `"`+key+`"`, "kernels.%s: %s (write it again with deepprof baseline)", key, msg)
	}
	for _, g := range b.Regions {
		if g.Name == "" || !ok(g.TotalMS) {
			bad(`"regions"`, `"`+g.Name+`"`, "region %q: want a name and total_ms >= 0", g.Name)
		}
		once(`"regions"`, "region", g.Name, g.Name)
	}
	for _, k := range b.Kernels.Spread {
		if k.Name == "" || k.Device < 0 || !ok(k.MinMS) || !ok(k.MedianMS) || !ok(k.MaxMS) || !ok(k.StdDevMS) {
			bad(`"spread"`, `"`+k.Name+`"`, "kernel spread %q: want a kernel_name, device >= 0, min_ms, median_ms, max_ms and stddev_ms >= 0", k.Name)
		}
		once(`"spread"`, "kernel spread", fmt.Sprintf("%d\x00%s", k.Device, k.Name), k.Name)
	}
	for _, w := range b.Work {
		busy, gaps, host := 0.0, 0.0, 0.0
		for _, p := range []struct {
			v *float64
			d *float64
		}{{w.BusyMS, &busy}, {w.GapMS, &gaps}, {w.HostUSPerLaunch, &host}} {
			if p.v != nil {
				*p.d = *p.v
			}
		}
		if w.Stage == "" || w.Instances < 0 || !ok(w.KernelMS) || !ok(w.Launches) || !ok(busy) || !ok(gaps) || !ok(host) ||
			(w.From != WorkFromPhases && w.From != WorkFromRegions) {
			bad(`"work"`, `"`+w.Stage+`"`, "work of stage %q: want a stage, from %q or %q, instances >= 0 and figures >= 0", w.Stage, WorkFromPhases, WorkFromRegions)
		}
		once(`"work"`, "work of stage", w.Stage, w.Stage)
	}
	if _, err := model.ParseGate(b.Gate); err != nil {
		bad(`"gate"`, "", "%v", err)
	}
	if br := b.BetweenRuns; br != nil {
		if b.Format != Format {
			bad(`"between_runs"`, "", "between_runs is new in %s: this file says %s", Format, b.Format)
		}
		if len(br.Runs) < 2 {
			bad(`"between_runs"`, `"runs"`, "between_runs: want the run ids of 2 runs or more, got %d", len(br.Runs))
		}
		spread := func(v model.Between) bool {
			return v.N >= 2 && v.N <= len(br.Runs) && ok(v.MinMS) && ok(v.MaxMS) && v.MinMS <= v.MaxMS
		}
		for _, st := range br.Stages {
			if st.Stage == "" || !spread(st.Between) {
				bad(`"between_runs"`, `"`+st.Stage+`"`, "stage %q between runs: want a stage, n from 2 to the %d runs, and 0 <= min_ms <= max_ms", st.Stage, len(br.Runs))
			}
			once(`"between_runs"`, "stage between runs", st.Stage, st.Stage)
		}
		for _, k := range br.Kernels {
			if k.Name == "" || k.Device < 0 || !spread(k.Between) {
				bad(`"between_runs"`, `"`+k.Name+`"`, "kernel %q between runs: want a kernel_name, device >= 0, n from 2 to the %d runs, and 0 <= min_ms <= max_ms", k.Name, len(br.Runs))
			}
			once(`"between_runs"`, "kernel between runs", fmt.Sprintf("%d\x00%s", k.Device, k.Name), k.Name)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	b.Source = name
	return &b, nil
}

// totalErr says which key of k is impossible for its rows, and why (msg
// "": none is).
// TotalMS sums the times of the Count kernels the run listed, of which
// Rows are the Top largest (all of them with Top 0): it is at least the rows' sum and at most that plus,
// for each kernel not kept, the smallest kept row's time, within rounding
// (1e-6 ms and a billionth). A total past that bound would raise the base
// of the appeared rule until no new kernel counted.
func (k Kernels) totalErr() (key, msg string) {
	if k.Top < 0 || k.Count < len(k.Rows) || (len(k.Rows) < k.Count && len(k.Rows) != k.Top) {
		return "count", fmt.Sprintf("%d kernels, top %d, %d rows: want the top kernels of count kept, all of them with top 0", k.Count, k.Top, len(k.Rows))
	}
	if !(k.TotalMS >= 0) || math.IsInf(k.TotalMS, 0) {
		return "total_ms", fmt.Sprintf("%g: want a time in ms >= 0", k.TotalMS)
	}
	sum, least := 0.0, math.Inf(1)
	for _, r := range k.Rows {
		sum += r.TotalMS
		least = min(least, r.TotalMS)
	}
	rest := k.Count - len(k.Rows) // rows are kept (top > 0) when rest > 0
	hi := sum
	if rest > 0 {
		hi += float64(rest) * least
	}
	slack := func(v float64) float64 { return 1e-6 + 1e-9*v }
	switch {
	case k.TotalMS < sum-slack(sum):
		msg = fmt.Sprintf("%g ms, less than its %d rows hold (%g ms)", k.TotalMS, len(k.Rows), sum)
	case k.TotalMS > hi+slack(hi) && rest == 0:
		msg = fmt.Sprintf("%g ms, more than its %d rows hold (%g ms), the %d kernels listed", k.TotalMS, len(k.Rows), sum, k.Count)
	case k.TotalMS > hi+slack(hi):
		msg = fmt.Sprintf("%g ms, more than %d kernels can hold: the %d rows %g ms, and the %d not kept at most %g ms each (the smallest row's)",
			k.TotalMS, k.Count, len(k.Rows), sum, rest, least)
	}
	return "total_ms", msg
}

// lineOf is the line of the first text after the first section in data:
// good enough to point at a value of a small file (1 when not found).
func lineOf(data []byte, section, text string) int {
	i := bytes.Index(data, []byte(section))
	if i < 0 {
		return 1
	}
	if j := bytes.Index(data[i:], []byte(text)); j >= 0 {
		i += j
	}
	return 1 + bytes.Count(data[:i], []byte{'\n'})
}

// lineOfSecond is the line of text's second occurrence after section (its
// first when there is one only).
func lineOfSecond(data []byte, section, text string) int {
	i := bytes.Index(data, []byte(section))
	if i < 0 {
		return 1
	}
	for n := 0; n < 2; n++ {
		j := bytes.Index(data[i:], []byte(text))
		if j < 0 {
			break
		}
		i += j
		if n == 0 {
			i += len(text)
		}
	}
	return 1 + bytes.Count(data[:i], []byte{'\n'})
}

func positioned(name string, data []byte, err error) error {
	off, ok := input.Offset(err)
	if !ok && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		off, ok = int64(len(data)), true
	}
	if !ok {
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%s:%d: %w", name, input.Line(data, off), err)
}

// Tolerances are how far a run may move from its baseline before a check
// fails, in percent of the baseline, per part; a zero field takes the
// default (10%). They live in package model (model.Tolerances), which
// package config can import without pulling in this package's
// dependencies.

// CompareBaseline compares a run (B, from FromRun) with its baseline (A)
// within the tolerances. render.MovedMarkdown writes the table of what
// moved; the result's Regression says whether anything moved beyond them the wrong way.
func CompareBaseline(base, run *Baseline, tol model.Tolerances) (*facts.DiffResult, error) {
	th, err := tol.Thresholds()
	if err != nil {
		return nil, err
	}
	a, bs := base.Summary(), run.Summary()
	if diffs := SetupDifferences(a, bs); len(diffs) > 0 {
		return nil, fmt.Errorf("%s (run A is the baseline, run B the run): a baseline of another setup measures another thing; record one of this setup (-update)", strings.Join(diffs, "; "))
	}
	if th.GateHost, err = GatesHost(tol.Gate, a); err != nil {
		return nil, err
	}
	return Compare(a, bs, th), nil
}

// GatesHost says whether a comparison gates the host (model.GateHost): as
// asked (deepprof diff --gate, the tolerances' gate) when a gate is asked
// for, else as a side's baseline file says (its "gate", deepprof baseline
// --gate). A gate asked for wins over the file's, either way.
func GatesHost(asked string, sides ...*Summary) (bool, error) {
	if asked != "" {
		return model.ParseGate(asked)
	}
	return slices.ContainsFunc(sides, func(s *Summary) bool { return s.GateHost }), nil
}

// SetGate sets the gate the baseline asks for (model.GateGPU or
// model.GateHost; "" asks for none): what a comparison with it gates when
// the comparison asks for no gate itself (GatesHost).
func (b *Baseline) SetGate(g string) error {
	if _, err := model.ParseGate(g); err != nil {
		return err
	}
	b.Gate = g
	return nil
}
