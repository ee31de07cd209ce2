package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/input"
)

// Phase tells the workload which step of a session runs it, so it can switch
// off its own torch profiler under nsys and ncu, where CUPTI conflicts.
type Phase string

// The phases of a session.
const (
	PhaseStage1 Phase = "stage1" // plain run, timings and operators
	PhaseNsys   Phase = "nsys"   // under Nsight Systems
	PhaseNcu    Phase = "ncu"    // under Nsight Compute
	PhaseCupti  Phase = "cupti"  // the plain run again, deepprof's CUPTI library injected
	PhaseOracle Phase = "oracle" // a plain run under torch.profiler, writing $DEEPPROF_ORACLE
)

// Environment variables the harness sets.
const (
	EnvPhase      = "DEEPPROF_PHASE"
	EnvReport     = "DEEPPROF_REPORT"
	EnvRepeats    = "DEEPPROF_REPEATS"
	EnvNVTXDomain = "DEEPPROF_NVTX_DOMAIN"
	EnvModel      = "DEEPPROF_MODEL" // the model section of the profile, as JSON
	EnvVisible    = "CUDA_VISIBLE_DEVICES"
	// EnvOracle is where a workload that supports PhaseOracle writes the
	// independent check's figures (Figures).
	EnvOracle = "DEEPPROF_ORACLE"
	// EnvAlone is "0" in a CUPTI run whose session makes a plain run
	// anyway (stage 1): the workload then times no program-alone repeats
	// and makes no operator table there (Report.Alone).
	EnvAlone = "DEEPPROF_ALONE"
)

// Spec is how to run a workload.
type Spec struct {
	Argv       []string
	Env        map[string]string // additions from the profile
	Inputs     []string          // files that must exist
	Repeats    int
	Visible    string // CUDA_VISIBLE_DEVICES
	NVTXDomain string
	Model      map[string]any
}

// Check reports inputs that do not exist and an empty argv.
func (s Spec) Check() error {
	var errs []error
	if len(s.Argv) == 0 {
		errs = append(errs, errors.New("workload.argv is empty: say what program to profile"))
	}
	for _, in := range s.Inputs {
		if _, err := os.Stat(in); err != nil {
			errs = append(errs, fmt.Errorf("workload input %s: %w", in, err))
		}
	}
	return errors.Join(errs...)
}

// Environ returns the variables the harness adds for one phase, sorted:
// the profile's own additions, then the harness's, which win.
func (s Spec) Environ(phase Phase, reportPath string) ([]string, error) {
	env := maps.Clone(s.Env)
	if env == nil {
		env = map[string]string{}
	}
	env[EnvPhase] = string(phase)
	if reportPath != "" {
		env[EnvReport] = reportPath
	}
	if s.Repeats > 0 {
		env[EnvRepeats] = strconv.Itoa(s.Repeats)
	}
	if s.Visible != "" {
		env[EnvVisible] = s.Visible
	}
	if s.NVTXDomain != "" {
		env[EnvNVTXDomain] = s.NVTXDomain
	}
	if len(s.Model) > 0 {
		b, err := json.Marshal(s.Model)
		if err != nil {
			return nil, fmt.Errorf("model section: %w", err)
		}
		env[EnvModel] = string(b)
	}
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out, nil
}

// Report is what a workload writes to $DEEPPROF_REPORT.
type Report struct {
	Model     Model                  `json:"model"`
	Tokens    Tokens                 `json:"tokens"`
	Stages    map[string]ReportStage `json:"stages"`
	Operators []Operator             `json:"operators,omitempty"`
	Versions  map[string]string      `json:"versions,omitempty"`
	// Extra keeps every other key, as the contract welcomes more.
	Extra map[string]json.RawMessage `json:"-"`
	// Ranks are each rank's own stage times, from the report's "ranks"
	// ([{"rank": R, "<stage>_ms": [...]}...], as the default workload
	// writes them under a launcher: its stages are rank 0's); nil without.
	Ranks []RankStages `json:"-"`
}

// RankStages is one rank's wall time per repeat of each stage of the
// report that it gives, in ms.
type RankStages struct {
	Rank   int
	Stages map[string][]float64
}

// Model is the model's identity and shapes (facts.Model); Tokens counts
// the prompt and generated tokens of one repeat (facts.Tokens).
type (
	Model  = facts.Model
	Tokens = facts.Tokens
)

// ReportStage holds one stage's wall time per repeat, in ms. A sub-stage (a
// module timed inside a top-level stage, named "PARENT/RANGE") names its
// parent: its time is already inside the parent's.
type ReportStage struct {
	MS     []float64 `json:"ms"`
	Parent string    `json:"parent,omitempty"`
	// Steps, beside MS, is how many steps each repeat holds (a decode of
	// many tokens): the warm-up rule compares repeats per step
	// (model.Sample). Absent: one each.
	Steps []float64 `json:"steps,omitempty"`
	// Processes split a stage read from the NVTX ranges of more than one
	// process (a program and its children, the ranks of a launcher) by
	// process; MS then pools their instances, each process's warm-up left
	// out. Never read from a workload report (deepprof sets it).
	Processes []ProcessMS `json:"-"`
}

// ProcessMS is one process's instances of a stage, in ms.
type ProcessMS struct {
	ProcessID int64     `json:"process_id"`
	MS        []float64 `json:"ms"`
	Steps     []float64 `json:"steps,omitempty"` // as ReportStage.Steps
}

// Operator is one row of the torch.profiler operator table (facts.Operator).
type Operator = facts.Operator

var known = []string{"model", "tokens", "stages", "operators", "versions"}

// ReadReport reads and checks a workload report. Errors name the file and,
// for JSON that does not parse or has a wrong type, the line.
func ReadReport(r io.Reader, name string) (*Report, error) {
	data, err := input.ReadAll(r, name)
	if err != nil {
		return nil, err
	}
	var rep Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rep); err != nil {
		return nil, positioned(name, data, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, positioned(name, data, err)
	}
	for _, k := range known {
		delete(all, k)
	}
	if len(all) > 0 {
		rep.Extra = all
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	if rep.Model.Name == "" {
		bad("model.name is missing")
	}
	if len(rep.Stages) == 0 {
		bad("stages is empty: a workload reports at least one stage (prefill, decode)")
	}
	checkStages(bad, "stages", rep.Stages)
	var paused struct {
		Stages map[string]json.RawMessage `json:"paused_stages"`
	}
	if raw, ok := rep.Extra["overhead"]; ok && json.Unmarshal(raw, &paused) == nil {
		errs = append(errs, rawStages(name, data, bytes.Index(data, []byte(`"paused_stages"`)), "overhead.paused_stages", paused.Stages)...)
	}
	if o, ok := rep.Overhead(); ok && o.Stages != nil {
		checkStages(bad, "overhead.paused_stages", o.Stages)
		everyStage(bad, "overhead.paused_stages", "the repeats with recording paused", rep.Stages, o.Stages)
	}
	if raw, ok := rep.Extra["alone"]; ok {
		var alone struct {
			Method string                     `json:"method"`
			Stages map[string]json.RawMessage `json:"stages"`
		}
		// the report's own key, written after its stages (a stage or
		// model of that name comes before it)
		at := bytes.LastIndex(data, []byte(`"alone"`))
		if err := json.Unmarshal(raw, &alone); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: alone: want {\"method\": \"...\", \"stages\": {stage: {\"ms\": [times in ms]}}}: %v", name, input.Line(data, int64(at)), err))
		} else {
			if len(alone.Stages) == 0 {
				bad("alone.stages is empty: the program-alone repeats time every stage the recorded ones do")
			}
			stages := at + max(0, bytes.Index(data[max(at, 0):], []byte(`"stages"`)))
			errs = append(errs, rawStages(name, data, stages, "alone.stages", alone.Stages)...)
		}
	}
	if a, ok := rep.Alone(); ok {
		checkStages(bad, "alone.stages", a.Stages)
		everyStage(bad, "alone.stages", "the program-alone repeats", rep.Stages, a.Stages)
	}
	if raw, ok := rep.Extra["ranks"]; ok {
		ranks, err := readRankStages(raw, rep.Stages)
		if err != nil {
			bad("ranks: %v", err)
		}
		rep.Ranks = ranks
	}
	if rep.Tokens.Prompt < 0 || rep.Tokens.Generated < 0 {
		bad("tokens must not be negative")
	}
	var opMS float64
	for i, op := range rep.Operators {
		if op.Name == "" || op.Calls < 0 || op.TotalMS < 0 {
			bad("operators[%d]: want a name, calls >= 0 and total_ms >= 0", i)
		}
		opMS += math.Abs(op.TotalMS) + math.Abs(op.CUDAMS)
	}
	if math.IsInf(opMS, 0) {
		bad("operators: total_ms and cuda_ms sum past the largest number a float64 holds (%.3g): not times in ms", math.MaxFloat64)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &rep, nil
}

// rawStages is an error, at the line of offset at, for each stage of key
// (a report's nested stages, still raw) that is not a stage as "stages"
// holds them.
func rawStages(name string, data []byte, at int, key string, stages map[string]json.RawMessage) []error {
	var errs []error
	for _, st := range slices.Sorted(maps.Keys(stages)) {
		var s ReportStage
		if err := json.Unmarshal(stages[st], &s); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s.%s: want a stage as \"stages\" holds them ({\"ms\": [times in ms]}): %v", name, input.Line(data, int64(at)), key, st, err))
		}
	}
	return errs
}

// everyStage reports, through bad, a top-level stage of the report's
// stages that key's repeats (what) leave out: they time every stage the
// recorded ones do.
func everyStage(bad func(string, ...any), key, what string, stages, got map[string]ReportStage) {
	for _, st := range slices.Sorted(maps.Keys(stages)) {
		if _, ok := got[st]; !ok && stages[st].Parent == "" {
			bad("%s has no %q: %s time every stage the recorded ones do", key, st, what)
		}
	}
}

// checkStages reports, through bad, a stage of key (a report's "stages"
// or the like) with no times, a time that is not one, or a parent that is
// not another stage of key.
func checkStages(bad func(string, ...any), key string, stages map[string]ReportStage) {
	for _, st := range slices.Sorted(maps.Keys(stages)) {
		if len(stages[st].MS) == 0 {
			bad("%s.%s.ms is empty", key, st)
		}
		if p := stages[st].Parent; p != "" {
			if _, ok := stages[p]; !ok || p == st {
				bad("%s.%s.parent = %q: not another stage of the report", key, st, p)
			}
		}
		sum := 0.0
		for i, v := range stages[st].MS {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				bad("%s.%s.ms[%d] = %v: want a time in ms", key, st, i, v)
			}
			sum += math.Abs(v)
		}
		if math.IsInf(sum, 0) {
			bad("%s.%s.ms: the times sum past the largest number a float64 holds (%.3g): not times in ms", key, st, math.MaxFloat64)
		}
	}
}

// positioned adds the line of a JSON error's offset.
func positioned(name string, data []byte, err error) error {
	off, ok := input.Offset(err)
	if !ok {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s:1: empty report: the workload wrote nothing", name)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%s:%d: the file ends inside a JSON value (cut short?)", name, input.Line(data, int64(len(data))))
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%s:%d: %w", name, input.Line(data, off), err)
}

// Batch is the sequences the workload ran at once: its report's "batch",
// 1 when it gives none (or none that is a count).
func (r *Report) Batch() int64 {
	if b, ok := r.batch(); ok {
		return b
	}
	return 1
}

// BatchGiven reports whether the report gives its batch size (Batch is
// otherwise 1).
func (r *Report) BatchGiven() bool {
	_, ok := r.batch()
	return ok
}

func (r *Report) batch() (int64, bool) {
	raw, ok := r.Extra["batch"]
	if !ok {
		return 0, false
	}
	var v int64
	if _, err := fmt.Sscan(string(raw), &v); err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}

// Shape is the workload's shape as its report gives it: "prompt 32,
// generated 64, batch 1"; "" when it gives no tokens.
func (r *Report) Shape() string {
	if r.Tokens.Prompt == 0 && r.Tokens.Generated == 0 {
		return ""
	}
	return fmt.Sprintf("prompt %d, generated %d, batch %d", r.Tokens.Prompt, r.Tokens.Generated, r.Batch())
}

// readRankStages reads the report's "ranks": each element's "rank" and, for
// each stage of stages, its "<stage>_ms" times when it has them.
func readRankStages(raw json.RawMessage, stages map[string]ReportStage) ([]RankStages, error) {
	var elems []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("want an array of objects: %w", err)
	}
	var out []RankStages
	seen := map[int]bool{}
	for i, e := range elems {
		var rank int
		if v, ok := e["rank"]; !ok || string(v) == "null" || json.Unmarshal(v, &rank) != nil || rank < 0 {
			return nil, fmt.Errorf("[%d].rank: want a rank >= 0", i)
		}
		if seen[rank] {
			return nil, fmt.Errorf("[%d]: rank %d appears twice", i, rank)
		}
		seen[rank] = true
		rs := RankStages{Rank: rank, Stages: map[string][]float64{}}
		for _, st := range slices.Sorted(maps.Keys(stages)) {
			v, ok := e[st+"_ms"]
			if !ok {
				continue
			}
			var ms []float64
			if err := json.Unmarshal(v, &ms); err != nil {
				return nil, fmt.Errorf("[%d].%s_ms: want times in ms: %w", i, st, err)
			}
			for j, x := range ms {
				if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
					return nil, fmt.Errorf("[%d].%s_ms[%d] = %v: want a time in ms", i, st, j, x)
				}
			}
			rs.Stages[st] = ms
		}
		out = append(out, rs)
	}
	slices.SortFunc(out, func(a, b RankStages) int { return a.Rank - b.Rank })
	return out, nil
}

// Overhead is a workload report's "overhead": its repeats run in
// alternation in the CUPTI run's one process, the library recording and
// paused, as deepprof's default workload writes it. ok is false when the
// report has none (or one that is not this shape).
func (r *Report) Overhead() (o CuptiOverhead, ok bool) {
	raw, found := r.Extra["overhead"]
	if !found || json.Unmarshal(raw, &o) != nil || len(o.Recording) == 0 {
		return CuptiOverhead{}, false
	}
	return o, true
}

// Alone is a workload report's "alone": the program's repeats run in the
// CUPTI run's process once the library had detached CUPTI from it
// (deepprof_cupti_detach), as deepprof's default workload writes it: the
// program with no profiler attached, stage 1's figures without a second
// run of the program. ok is false when the report has none (or one that is
// not this shape).
func (r *Report) Alone() (a AloneRepeats, ok bool) {
	raw, found := r.Extra["alone"]
	if !found || json.Unmarshal(raw, &a) != nil || len(a.Stages) == 0 {
		return AloneRepeats{}, false
	}
	return a, true
}

// AloneRepeats are the program-alone repeats of a workload report
// (Report.Alone).
type AloneRepeats struct {
	Method string                 `json:"method"`
	Stages map[string]ReportStage `json:"stages"`
}

// AloneReport is r with the program-alone repeats' stages as its own, for
// what reads a report of the program alone (stage 1's); ok is false when
// r has none.
func (r *Report) AloneReport() (*Report, bool) {
	a, ok := r.Alone()
	if !ok {
		return nil, false
	}
	alone := *r
	alone.Stages = a.Stages
	alone.Ranks = nil
	return &alone, true
}

// CuptiOverhead is the CUPTI library's cost measured in one process: each
// repeat's wall time recording and paused, in pairs.
type CuptiOverhead struct {
	Method    string    `json:"method"`
	Recording []float64 `json:"recording_ms"`
	Paused    []float64 `json:"paused_ms"`
	// Stages are the paused repeats' stages, as the report's stages are
	// the recorded ones': the program's wall times with the library
	// loaded and idle, in the same process (nil when the workload gives
	// only their totals). They do not stand in for stage 1: the library's
	// hooks still run while it is paused.
	Stages map[string]ReportStage `json:"paused_stages,omitempty"`
}
