package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// partFiles are the files each required part is read from, relative to MAIN.
var partFiles = map[string]string{
	facts.PartStages:  rundir.Stage1Report,
	facts.PartKernels: rundir.KernelsJSON,
	facts.PartRegions: rundir.RegionsJSON,
}

// Summary is the numbers of one run that a comparison looks at: read from a
// run directory by Load, or from a baseline file (Baseline.Summary).
type Summary struct {
	Source string // the run directory or baseline file
	RunID  string
	Model  string // the workload's model name, "" when unknown
	// Program is the profiled program's name (config.yaml's workload.name:
	// a script's stem, or deepprof's workload), "" when unknown.
	Program string
	Device  string // the GPU's name, "" when unknown
	// Shape is the workload's tokens and batch (workload.Report.Shape),
	// "" when unknown.
	Shape string
	// Kernels is where the kernel table came from, from the manifest's
	// sources; its Path is "" when unknown (a baseline).
	KernelsFrom rundir.Source

	Stages  []model.StageTimes   // in the order prefill, decode, then by name
	Kernels []model.KernelTotals // as listed, by total time descending
	// KernelMS is the summed time of every kernel the run listed (before a
	// baseline's top-N cut): the "A's kernel time" of the appeared rule.
	KernelMS float64
	Regions  []RegionTotals
	// EveryLaunchRegions are summary.json's regions when they count every
	// launch of the timing pass (ncu/regions/ holds the deep pass's sample);
	// nil otherwise.
	EveryLaunchRegions []RegionTotals
	MFU                *MFU // nil when the run has no summary.json (or no "mfu" in it)
	// Spreads are how the listed kernels' launch durations vary, where the
	// run recorded it (kernels.json's rows, or summary.json's top kernels).
	Spreads map[kernelKey]model.Spread
	// Work is each stage's GPU work, by stage name, where summary.json has
	// figures for it (its phase rows, or its regions of every launch).
	Work map[string]facts.StageWork
	// GateHost says the baseline file this came from gates the host
	// (its "gate" is model.GateHost).
	GateHost bool
	// BetweenRuns is the spread between the runs of the baseline file
	// this came from, where it was made of several; nil otherwise.
	BetweenRuns *BetweenRuns

	// Read are the files the numbers were read from, relative to Source
	// (a baseline: the file itself, "").
	Read []string

	// Missing lists the parts whose file the run does not have.
	Missing []facts.DiffMissing
	// Unsound says why the run's numbers may not be whole, from its
	// manifest: the run is not complete, or a file compared is partial or
	// stale. deepprof diff and baseline refuse such a run unless asked.
	Unsound []string
}

// RegionTotals is one region of the regions report's aggregate.
type RegionTotals struct {
	Name        string  `json:"name"`
	TotalMS     float64 `json:"total_ms"`
	KernelCount int64   `json:"kernel_count"`
}

// MFU is model FLOPs utilization, each a fraction 0..1; nil is not
// available (never 0).
type MFU struct {
	Model   *float64 `json:"model"`
	Prefill *float64 `json:"prefill"`
	Decode  *float64 `json:"decode"`
}

// Has reports whether the summary has a part (its file was found).
func (s *Summary) Has(part string) bool {
	return !slices.ContainsFunc(s.Missing, func(m facts.DiffMissing) bool { return m.Part == part })
}

// ErrNotRun is the error of a directory that is not a run directory
// (rundir.Open's, the one detection of a run: its mark).
var ErrNotRun = rundir.ErrNotRun

// ErrNothingToCompare is the error of a run that holds none of the files
// a comparison reads.
var ErrNothingToCompare = errors.New("nothing to compare")

// Load reads the compared numbers of the run directory dir, each file
// through the run (rundir.ReadFileIn: never through a link out of it, never
// anything but a plain file). A folder that is not a run (rundir.Open) is
// refused before any of its files is read. A file that does not exist is
// recorded in Missing; one that exists but does not parse, or breaks its
// contract, is an error naming it and, where known, its line.
func Load(dir string) (*Summary, error) {
	run, err := rundir.Open(dir)
	if err != nil {
		return nil, err
	}
	m := run.Manifest()
	s := &Summary{Source: dir, RunID: m.RunID}
	read := func(part string, fn func(data []byte, name string) error) error {
		name := filepath.Join(dir, filepath.FromSlash(partFiles[part]))
		data, err := rundir.ReadFileIn(dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			s.Missing = append(s.Missing, facts.DiffMissing{Part: part, File: name})
			return nil
		}
		if err != nil {
			return err
		}
		s.Read = append(s.Read, partFiles[part])
		if err := input.NoDuplicateKeys(data, name); err != nil {
			return err // a second key would be taken silently, the last one
		}
		return fn(data, name)
	}
	errs := []error{
		read(facts.PartStages, s.readStage1),
		read(facts.PartKernels, s.readKernels),
		read(facts.PartRegions, s.readRegions),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(s.Missing) == len(partFiles) {
		return nil, fmt.Errorf("%s: %w: the run has no %s, %s nor %s (deepprof report makes the last two of its records)", dir, ErrNothingToCompare,
			rundir.Stage1Report, rundir.KernelsJSON, rundir.RegionsJSON)
	}
	if !s.Has(facts.PartStages) {
		// No plain run: the program-alone repeats the CUPTI run timed
		// after the library detached, where its report has them.
		if err := s.readAloneStages(dir); err != nil {
			return nil, err
		}
	}
	if b, err := rundir.ReadFileIn(dir, filepath.Join(dir, rundir.ConfigYAML)); err == nil {
		var c struct {
			Workload struct {
				Name string `yaml:"name"`
			} `yaml:"workload"`
		}
		if yaml.Unmarshal(b, &c) == nil {
			s.Program = c.Workload.Name
		}
	}
	name := filepath.Join(dir, rundir.SummaryJSON)
	data, err := rundir.ReadFileIn(dir, name)
	switch {
	case err == nil:
		s.Read = append(s.Read, rundir.SummaryJSON)
		if err := input.NoDuplicateKeys(data, name); err != nil {
			return nil, err
		}
		if s.MFU, err = readMFU(data, name); err != nil {
			return nil, err
		}
		if s.EveryLaunchRegions, err = readSummaryRegions(data, name); err != nil {
			return nil, err
		}
		if !s.Has(facts.PartStages) {
			// A program that writes no workload report: its stages are its
			// NVTX ranges, in summary.json, with the same statistic.
			if err := s.readSummaryStages(data, name); err != nil {
				return nil, err
			}
		}
		if err := s.readWork(data, name); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	s.Unsound = unsound(m)
	if m.Sources != nil {
		s.KernelsFrom = m.Sources.Kernels
	}
	return s, nil
}

// UnsoundError is a run whose numbers may not be whole (Summary.Unsound),
// refused where a comparison or a baseline would take them as the run's.
type UnsoundError struct {
	Dir string
	Why []string
}

func (e *UnsoundError) Error() string {
	return fmt.Sprintf("%s: not a complete run (%s): its numbers may be partial or stale; rebuild it (deepprof report) where its files are stale, profile again where the run stopped, or pass --allow-partial to use it as it is",
		e.Dir, strings.Join(e.Why, "; "))
}

// Sound is an *UnsoundError when the run has reasons not to be compared.
func (s *Summary) Sound() error {
	if len(s.Unsound) == 0 {
		return nil
	}
	return &UnsoundError{Dir: s.Source, Why: s.Unsound}
}

// unsound is why a manifest's run may not be compared as it is: a run
// that is not complete (it stopped, or a step failed), and each file the
// comparison reads that the manifest does not call complete.
func unsound(m rundir.Manifest) []string {
	var out []string
	if m.Status != rundir.StatusComplete {
		why := fmt.Sprintf("the run is %s", m.Status)
		if m.Reason != "" {
			why += ": " + m.Reason
		}
		out = append(out, why)
	}
	for _, rel := range append(slices.Sorted(maps.Values(partFiles)), rundir.SummaryJSON) {
		if a, ok := m.Find(rel); ok && a.Status != rundir.StatusComplete && a.Status != rundir.StatusSkipped {
			why := fmt.Sprintf("%s is %s", rel, a.Status)
			if a.Reason != "" {
				why += ": " + a.Reason
			}
			out = append(out, why)
		}
	}
	return out
}

// stageOrder puts the stages every workload reports first.
var stageOrder = []string{"prefill", "decode"}

func (s *Summary) readStage1(data []byte, name string) error {
	rep, err := workload.ReadReport(bytes.NewReader(data), name)
	if err != nil {
		return err
	}
	s.takeStages(rep)
	return nil
}

// takeStages takes a workload report's model, device and stages.
func (s *Summary) takeStages(rep *workload.Report) {
	s.Model = rep.Model.Name
	s.Shape = rep.Shape()
	if raw, ok := rep.Extra["device"]; ok {
		json.Unmarshal(raw, &s.Device) // a device that is not a string stays unknown
	}
	for _, n := range SortStages(keys(rep.Stages)) {
		s.Stages = append(s.Stages, model.NewStage(n, rep.Stages[n].MS, rep.Stages[n].Steps))
	}
}

// AloneStagesRead is how Read names the CUPTI run's report when its
// program-alone repeats (timed after the library detached) gave the
// stages.
const AloneStagesRead = rundir.ReadAloneStages

// readAloneStages takes the stages of the CUPTI run's program-alone
// repeats (workload.Report.Alone) in place of the missing
// stage1/report.json: the program's speed, as stage 1's is. A run whose
// CUPTI report has none is left as it was.
func (s *Summary) readAloneStages(dir string) error {
	name := filepath.Join(dir, filepath.FromSlash(rundir.TimelineReport))
	data, err := rundir.ReadFileIn(dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	rep, err := workload.ReadReport(bytes.NewReader(data), name)
	if err != nil {
		return err
	}
	alone, ok := rep.AloneReport()
	if !ok {
		return nil
	}
	s.takeStages(alone)
	s.Missing = slices.DeleteFunc(s.Missing, func(m facts.DiffMissing) bool { return m.Part == facts.PartStages })
	s.Read = append(s.Read, AloneStagesRead)
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// SortStages sorts stage names: prefill, decode, then the others by name.
func SortStages(names []string) []string {
	// A sub-stage "PARENT/RANGE" sorts right after its parent.
	top := func(n string) string {
		if p, _, ok := strings.Cut(n, "/"); ok {
			return p
		}
		return n
	}
	rank := func(n string) int {
		if i := slices.Index(stageOrder, top(n)); i >= 0 {
			return i
		}
		return len(stageOrder)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		if ta, tb := top(a), top(b); ta != tb {
			return strings.Compare(ta, tb)
		}
		return strings.Compare(a, b) // the parent ("decode") before "decode/..."
	})
	return names
}

// ReadKernelRows reads a kernels.json, data, named name in its errors: its
// rows as listed, each checked as Load checks them.
func ReadKernelRows(data []byte, name string) ([]model.KernelTotals, error) {
	var s Summary
	if err := s.readKernels(data, name); err != nil {
		return nil, err
	}
	return s.Kernels, nil
}

func (s *Summary) readKernels(data []byte, name string) error {
	seen := map[model.KernelTotals]int{}
	found, err := jsonDoc{name, data, 1}.eachElement("kernels", func(el jsonDoc) error {
		var k struct {
			Name    *string        `json:"kernel_name"`
			Device  model.DeviceID `json:"device"`
			TotalMS *float64       `json:"total_ms"`
			Calls   int64          `json:"calls"`
			// A table made with spread has it beside the totals.
			StdDevMS *float64 `json:"stddev_ms"`
			model.Spread
		}
		if err := el.unmarshal(&k); err != nil {
			return err
		}
		switch {
		case k.Name == nil || *k.Name == "":
			return el.errorf(0, "a kernel without kernel_name")
		case k.TotalMS == nil || !validMS(*k.TotalMS):
			return el.errorf(0, "kernel %q: want total_ms, a time in ms >= 0", *k.Name)
		case k.Device < 0 || k.Calls < 0:
			return el.errorf(0, "kernel %q: want device >= 0 and calls >= 0, got %d and %d", *k.Name, k.Device, k.Calls)
		case math.IsInf(s.KernelMS+*k.TotalMS, 0):
			return el.errorf(0, "kernel %q: the kernels' total_ms sum past the largest number a float64 holds: not times in ms", *k.Name)
		}
		key := model.KernelTotals{Name: *k.Name, Device: k.Device}
		if prev, dup := seen[key]; dup {
			return el.errorf(0, "kernel %q on device %d is listed twice (first on line %d)", *k.Name, k.Device, prev)
		}
		seen[key] = el.first
		s.Kernels = append(s.Kernels, model.KernelTotals{Name: *k.Name, Device: k.Device, TotalMS: *k.TotalMS, Calls: k.Calls})
		if k.StdDevMS != nil && validMS(*k.StdDevMS) {
			if s.Spreads == nil {
				s.Spreads = map[kernelKey]model.Spread{}
			}
			sp := k.Spread
			sp.StdDevMS = *k.StdDevMS // the field's key is read into StdDevMS above
			s.Spreads[kernelKey{*k.Name, k.Device}] = sp
		}
		s.KernelMS += *k.TotalMS
		return nil
	})
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%s:1: no \"kernels\" list (want {\"kernels\": [...]})", name)
	}
	s.KernelMS = model.RoundMS(s.KernelMS)
	return nil
}

// readRegions reads the aggregate of a regions report, or, when it was
// written without one (--aggregate=false), sums its scopes' regions by name.
func (s *Summary) readRegions(data []byte, name string) error {
	doc := jsonDoc{name, data, 1}
	var regs []RegionTotals
	byName := map[string]int{}
	add := func(sum bool) func(jsonDoc) error {
		return func(el jsonDoc) error {
			var r struct {
				Name        *string  `json:"name"`
				TotalMS     *float64 `json:"total_ms"`
				KernelCount int64    `json:"kernel_count"`
			}
			if err := el.unmarshal(&r); err != nil {
				return err
			}
			switch {
			case r.Name == nil || *r.Name == "":
				return el.errorf(0, "a region without a name")
			case r.TotalMS == nil || !validMS(*r.TotalMS):
				return el.errorf(0, "region %q: want total_ms, a time in ms >= 0", *r.Name)
			case r.KernelCount < 0:
				return el.errorf(0, "region %q: want kernel_count >= 0, got %d", *r.Name, r.KernelCount)
			}
			i, ok := byName[*r.Name]
			switch {
			case ok && sum:
				if math.IsInf(regs[i].TotalMS+*r.TotalMS, 0) {
					return el.errorf(0, "region %q: its scopes' total_ms sum past the largest number a float64 holds: not times in ms", *r.Name)
				}
				regs[i].TotalMS = model.RoundMS(regs[i].TotalMS + *r.TotalMS)
				regs[i].KernelCount += r.KernelCount
			case ok:
				return el.errorf(0, "region %q is listed twice", *r.Name)
			default:
				byName[*r.Name] = len(regs)
				regs = append(regs, RegionTotals{Name: *r.Name, TotalMS: *r.TotalMS, KernelCount: r.KernelCount})
			}
			return nil
		}
	}
	found, err := doc.eachElement("aggregate", add(false))
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%s:1: no \"aggregate\" list (want the regions report.json contract)", name)
	}
	if len(regs) == 0 {
		_, err = doc.eachElement("scopes", func(scope jsonDoc) error {
			_, err := scope.eachElement("regions", add(true))
			return err
		})
		if err != nil {
			return err
		}
	}
	s.Regions = regs
	return nil
}

// readSummaryStages takes the stages of summary.json (a program's NVTX
// ranges, when it wrote no workload report) in place of the missing
// stage1/report.json, with the model and GPU the summary names.
func (s *Summary) readSummaryStages(data []byte, name string) error {
	// summary.json's own types (package facts), for the two parts read
	var doc struct {
		Environment facts.Environment `json:"environment"`
		Stages      facts.Stages      `json:"stages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Stages.Rows) == 0 {
		return nil
	}
	var names []string
	byName := map[string][]float64{}
	steps := map[string][]float64{}
	for _, r := range doc.Stages.Rows {
		if r.Name == "" || len(r.MS) == 0 {
			return fmt.Errorf("%s: stages.rows: want a name and ms, got %q", name, r.Name)
		}
		if _, dup := byName[r.Name]; dup {
			return fmt.Errorf("%s: stages.rows: stage %q is listed twice", name, r.Name)
		}
		sum := 0.0
		for _, v := range r.MS {
			if !validMS(v) {
				return fmt.Errorf("%s: stages.rows: stage %q: ms %v: want a time >= 0", name, r.Name, v)
			}
			sum += v
		}
		if math.IsInf(sum, 0) {
			return fmt.Errorf("%s: stages.rows: stage %q: its ms sum past the largest number a float64 holds: not times in ms", name, r.Name)
		}
		if r.Steps != nil && len(r.Steps) != len(r.MS) {
			return fmt.Errorf("%s: stages.rows: stage %q: %d steps for %d repeats: want one each", name, r.Name, len(r.Steps), len(r.MS))
		}
		for _, v := range r.Steps {
			if !(v >= 1) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: stages.rows: stage %q: steps %v: want a count >= 1", name, r.Name, v)
			}
		}
		names = append(names, r.Name)
		byName[r.Name] = r.MS
		steps[r.Name] = r.Steps
	}
	for _, n := range SortStages(names) {
		s.Stages = append(s.Stages, model.NewStage(n, byName[n], steps[n]))
	}
	s.Missing = slices.DeleteFunc(s.Missing, func(m facts.DiffMissing) bool { return m.Part == facts.PartStages })
	s.Read = append(s.Read, rundir.ReadSummaryStages)
	if doc.Environment.Model != nil && s.Model == "" {
		s.Model = doc.Environment.Model.Name
	}
	if s.Device == "" {
		s.Device = doc.Environment.GPU
	}
	return nil
}

// readSummaryRegions reads summary.json's regions when they are not a
// sample (the stakeholder summary counts every launch of the timing pass).
func readSummaryRegions(data []byte, name string) ([]RegionTotals, error) {
	var doc struct {
		Regions *facts.Regions `json:"regions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if doc.Regions == nil || doc.Regions.Sampled || len(doc.Regions.Rows) == 0 {
		return nil, nil
	}
	var out []RegionTotals
	for _, r := range doc.Regions.Rows {
		if r.Name == "" || !validMS(r.TotalMS) {
			return nil, fmt.Errorf("%s: regions.rows: want a name and total_ms >= 0, got %q %v", name, r.Name, r.TotalMS)
		}
		out = append(out, RegionTotals{Name: r.Name, TotalMS: r.TotalMS, KernelCount: r.Launches})
	}
	return out, nil
}

func readMFU(data []byte, name string) (*MFU, error) {
	doc := jsonDoc{name, data, 1}
	var v struct {
		MFU *MFU `json:"mfu"`
	}
	if err := doc.unmarshal(&v); err != nil {
		return nil, err
	}
	if v.MFU == nil {
		return nil, nil
	}
	for _, f := range []struct {
		key string
		v   *float64
	}{{"model", v.MFU.Model}, {"prefill", v.MFU.Prefill}, {"decode", v.MFU.Decode}} {
		if f.v != nil && !(*f.v >= 0 && *f.v <= 1) {
			return nil, fmt.Errorf("%s:%d: mfu.%s = %v: want a fraction 0..1 or null", name, doc.lineOfKey("mfu", f.key), f.key, *f.v)
		}
	}
	return v.MFU, nil
}

func validMS(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// jsonDoc is a JSON text with its file name and the line it starts on (1
// for a file, more for a value inside one), for positioned errors.
type jsonDoc struct {
	name  string
	data  []byte
	first int
}

func (d jsonDoc) line(off int64) int {
	return d.first - 1 + input.Line(d.data, off)
}

func (d jsonDoc) errorf(off int64, format string, args ...any) error {
	return fmt.Errorf("%s:%d: "+format, append([]any{d.name, d.line(off)}, args...)...)
}

// positioned adds the line of a JSON error's offset to it.
func (d jsonDoc) positioned(err error) error {
	if off, ok := input.Offset(err); ok {
		return d.errorf(off, "%w", err)
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return d.errorf(int64(len(d.data)), "unexpected end of JSON")
	}
	return fmt.Errorf("%s: %w", d.name, err)
}

// unmarshal decodes the whole of d into v.
func (d jsonDoc) unmarshal(v any) error {
	if err := json.Unmarshal(d.data, v); err != nil {
		return d.positioned(err)
	}
	return nil
}

// eachElement calls fn for each element of the array under key in the JSON
// object d, with the element as a jsonDoc of its own (its line first).
// found is false when the object has no such key; null is an empty list.
func (d jsonDoc) eachElement(key string, fn func(el jsonDoc) error) (found bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(d.data))
	fail := func(err error) (bool, error) { return found, d.positioned(err) }
	tok, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	if tok != json.Delim('{') {
		return false, d.errorf(0, "want a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if tok != key {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
			continue
		}
		found = true
		if tok, err = dec.Token(); err != nil {
			return fail(err)
		}
		if tok == nil {
			continue
		}
		if tok != json.Delim('[') {
			return found, d.errorf(dec.InputOffset(), "%q: want a list", key)
		}
		for dec.More() {
			start := nextValue(d.data, dec.InputOffset())
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fail(err)
			}
			if err := fn(jsonDoc{d.name, raw, d.line(start)}); err != nil {
				return found, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return fail(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return found, d.errorf(dec.InputOffset(), "data after the JSON object")
	}
	return found, nil
}

// nextValue skips the separators after off.
func nextValue(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

// lineOfKey is the line of the first "key" after the first "after" in d
// (d's first line when not found): good enough to point at a value of a
// small file.
func (d jsonDoc) lineOfKey(after, key string) int {
	from := max(bytes.Index(d.data, []byte(`"`+after+`"`)), 0)
	i := bytes.Index(d.data[from:], []byte(`"`+key+`"`))
	if i < 0 {
		return d.first
	}
	return d.line(int64(from + i))
}
