package kernels

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Raw-page columns read for classification.
const (
	// SMThroughputMetric is the SOL section's "Compute (SM) Throughput".
	SMThroughputMetric = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
	// MemThroughputMetric is the SOL section's "Memory Throughput".
	MemThroughputMetric = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
	// DRAMBytesMetric is a DRAM byte count; ncu's sets do not collect it,
	// a --metrics list may.
	DRAMBytesMetric = "dram__bytes.sum"
	// DRAMRateMetric is DRAM bytes per second, collected by the roofline
	// set; times the duration it is the launch's DRAM traffic.
	DRAMRateMetric = "dram__bytes.sum.per_second"
	// SMSPCyclesMetric turns the per-cycle instruction rates of the roofline
	// set back into counts.
	SMSPCyclesMetric = "smsp__cycles_elapsed.avg"
)

// The details page names the two SOL throughputs by their display names.
const (
	detailsSOLSection = model.SOLSection
	detailsSMName     = "Compute (SM) Throughput"
	detailsMemName    = "Memory Throughput"
)

// fpOps are the non-tensor floating-point instructions the roofline counts,
// with the FLOPs one thread instruction does. The weights are ncu's own: its
// roofline set exports achieved rates derived__smsp__..._ffma_pred_on_x2,
// _dfma_x2, _hadd_x2, _hmul_x2 and _hfma_x4 (the half-precision
// instructions work on packed pairs), and no fadd/fmul/dadd/dmul
// multiplier.
var fpOps = []struct {
	op     string
	weight float64
	fp32   bool // an FP32 instruction, on the FMA pipe
}{
	{"dadd", 1, false}, {"dmul", 1, false}, {"dfma", 2, false},
	{"fadd", 1, true}, {"fmul", 1, true}, {"ffma", 2, true},
	{"hadd", 2, false}, {"hmul", 2, false}, {"hfma", 4, false},
}

func fpCountNames(op string) []string {
	return []string{
		"smsp__sass_thread_inst_executed_op_" + op + "_pred_on.sum",
		"sm__sass_thread_inst_executed_op_" + op + "_pred_on.sum",
	}
}

func fpRateName(op string) string {
	return "smsp__sass_thread_inst_executed_op_" + op + "_pred_on.sum.per_cycle_elapsed"
}

// tensorTypes are the source types of sm__ops_path_tensor_src_<type>.sum
// known to this package: those in the recorded exports (H200 roofline set,
// RTX 5090 metrics) and those ncu --query-metrics lists on other GPUs. A raw
// page with any other such column is refused by MetricsFromReader rather than
// undercounted.
var tensorTypes = []string{
	"bf16_dst_bf16", "bf16_dst_fp32", "fp16", "fp16_dst_fp16", "fp16_dst_fp32",
	"fp4_dst_fp32", "fp64", "fp8", "int1", "int4", "int8", "tf32_dst_fp32",
}

const (
	tensorPrefix = "sm__ops_path_tensor_src_"
	tensorSuffix = ".sum"
)

// Columns are the raw-page metric columns the classification reads.
func Columns() []string {
	cols := []string{SMThroughputMetric, MemThroughputMetric, DRAMBytesMetric, DRAMRateMetric, SMSPCyclesMetric}
	for _, o := range fpOps {
		cols = append(cols, fpCountNames(o.op)...)
		cols = append(cols, fpRateName(o.op))
	}
	for _, t := range tensorTypes {
		for _, sp := range []string{"", "_sparsity_off", "_sparsity_on"} {
			cols = append(cols, tensorPrefix+t+sp+tensorSuffix)
		}
	}
	return cols
}

// wantedColumn matches the raw-page columns that count toward FLOPs, DRAM
// bytes or SOL, so that a reader made without Options (or a column this
// package does not list) is caught instead of read as zero.
var wantedColumn = regexp.MustCompile(`^(sm__ops_path_tensor_src_[a-z0-9_]+\.sum|smsp__sass_thread_inst_executed_op_[dfh](add|mul|fma)_pred_on\.sum(\.per_cycle_elapsed)?|sm__sass_thread_inst_executed_op_[dfh](add|mul|fma)_pred_on\.sum|sm__throughput\.avg\.pct_of_peak_sustained_elapsed|gpu__compute_memory_throughput\.avg\.pct_of_peak_sustained_elapsed|dram__bytes\.sum(\.per_second)?|smsp__cycles_elapsed\.avg)$`)

// Metrics is one kernel's deep-pass measurements, summed or averaged over its
// launches (on every device).
type Metrics struct {
	Kernel     string
	Launches   int     // deep-pass launches seen
	DurationNS float64 // their summed gpu__time_duration
	// SMPct and MemPct are duration-weighted means of the SOL throughputs
	// (SMThroughputMetric, MemThroughputMetric) over the launches that had
	// both.
	SMPct, MemPct float64
	HasSOL        bool
	// FLOPs sums, over launches, the tensor-core ops
	// (sm__ops_path_tensor_src_<type>.sum; integer types count as ops) and
	// the non-tensor floating-point ops (see fpOps for the weights).
	// Zero unless HasRoofline.
	FLOPs float64
	// DRAMBytes sums dram__bytes.sum, or dram__bytes.sum.per_second times
	// the duration, over launches. Zero unless HasRoofline.
	DRAMBytes float64
	// HasRoofline says every launch had both FLOP counters and DRAM bytes,
	// so that FLOPs, DRAMBytes and DurationNS cover the same launches.
	HasRoofline bool
	// TensorOps, FPFLOPs and FP32FLOPs split the FLOP counters, summed
	// over launches: the tensor-core ops, the non-tensor floating-point
	// FLOPs (fpOps), and of those the FP32 ones (FADD, FMUL, FFMA). Zero
	// unless HasFLOPs, which says every launch had FLOP counters (DRAM
	// bytes or not).
	TensorOps, FPFLOPs, FP32FLOPs float64
	HasFLOPs                      bool
	// Configs are the launch configurations of the launches seen, each
	// its grid and block as ncu writes them ("(128, 1, 1) (256, 1, 1)"),
	// sorted.
	Configs []string
}

// ConfigKey is how a launch configuration is written in Metrics.Configs:
// the grid and block sizes as ncu and the CUPTI timeline write them.
func ConfigKey(grid, block string) string { return grid + " " + block }

// Intensity is the arithmetic intensity, FLOP per DRAM byte; false when the
// counters were not measured or no DRAM byte moved.
func (m Metrics) Intensity() (float64, bool) {
	if !m.HasRoofline || m.DRAMBytes <= 0 {
		return 0, false
	}
	return m.FLOPs / m.DRAMBytes, true
}

// FLOPS is the achieved FLOP/s: FLOPs over the summed duration.
func (m Metrics) FLOPS() (float64, bool) {
	if !m.HasRoofline || m.DurationNS <= 0 {
		return 0, false
	}
	return m.FLOPs / (m.DurationNS * 1e-9), true
}

// BytesPerSec is the achieved DRAM bandwidth: DRAMBytes over the summed
// duration.
func (m Metrics) BytesPerSec() (float64, bool) {
	if !m.HasRoofline || m.DurationNS <= 0 {
		return 0, false
	}
	return m.DRAMBytes / (m.DurationNS * 1e-9), true
}

// measure is what one launch contributes.
type measure struct {
	durNS   float64
	sm, mem float64
	hasSOL  bool
	flopCounts
	dram    float64
	hasDRAM bool
}

// flopCounts are one launch's FLOP counters: every op, and the
// tensor-core ops, the non-tensor floating-point FLOPs and the FP32 ones
// among them.
type flopCounts struct {
	flops, tensor, fp, fp32 float64
	hasFLOPs                bool
}

// measureLaunch reads one launch's values: its duration, the SOL
// throughputs, the FLOP counters and the DRAM bytes. Metric values are in
// base units (model.Scale): % for the throughputs, byte/second for the
// DRAM rate, inst/cycle for the instruction rates, cycle for the cycle
// count. A value in another unit is a positioned error.
func measureLaunch(source string, l *model.Launch) (measure, error) {
	if !l.Duration.Valid {
		return measure{}, launchError(source, l, "no duration (no %s, nor %s in %q)", model.DurationMetric, model.SOLDurationMetric, model.SOLSection)
	}
	v := indexLaunch(source, l)
	m := measure{durNS: l.Duration.Base}
	var err error
	if m.sm, m.mem, m.hasSOL, err = v.sol(); err != nil {
		return m, err
	}
	if m.flopCounts, err = v.flops(); err != nil {
		return m, err
	}
	if m.dram, m.hasDRAM, err = v.dramBytes(m.durNS); err != nil {
		return m, err
	}
	return m, nil
}

// launchError is a problem with one launch, positioned at its first row.
func launchError(source string, l *model.Launch, format string, args ...any) error {
	return &model.SyntaxError{File: source, Line: l.Line, Msg: fmt.Sprintf("launch %d: ", l.ID) + fmt.Sprintf(format, args...)}
}

// launchValues is one launch's metrics by name, for lookups.
type launchValues struct {
	source string
	l      *model.Launch
	// vals holds each metric name's first valid value (else its first).
	vals map[string]model.Value
	// detSM and detMem are the details page's SOL rows, by display name.
	detSM, detMem model.Value
}

// indexLaunch indexes the metrics of l by name.
func indexLaunch(source string, l *model.Launch) launchValues {
	v := launchValues{source: source, l: l, vals: make(map[string]model.Value, len(l.Metrics))}
	for _, mt := range l.Metrics {
		if mt.Section == detailsSOLSection {
			switch mt.Name {
			case detailsSMName:
				v.detSM = mt.Value
			case detailsMemName:
				v.detMem = mt.Value
			}
		}
		if _, dup := v.vals[mt.Name]; !dup || !v.vals[mt.Name].Valid {
			v.vals[mt.Name] = mt.Value
		}
	}
	return v
}

// get is the metric name's value in base units; false when the launch has
// no valid value of it, an error when its unit is not unit.
func (v launchValues) get(name, unit string) (float64, bool, error) {
	val, ok := v.vals[name]
	if !ok {
		return 0, false, nil
	}
	return v.checked(val, name, unit)
}

// checked is val's base value; false when it is not valid, an error (which
// calls it name) when its unit is not unit.
func (v launchValues) checked(val model.Value, name, unit string) (float64, bool, error) {
	if !val.Valid {
		return 0, false, nil
	}
	if val.Unit != unit {
		return 0, false, launchError(v.source, v.l, "%s has unit %q, not %q", name, val.OrigUnit, unit)
	}
	return val.Base, true, nil
}

// percent is one SOL throughput, from its raw column, else from the
// details page's SOL row (det, named detName).
func (v launchValues) percent(raw string, det model.Value, detName string) (float64, bool, error) {
	pct, ok, err := v.get(raw, "%")
	if err != nil || ok {
		return pct, ok, err
	}
	if !det.Valid {
		return 0, false, nil
	}
	if det.Unit != "%" {
		return 0, false, launchError(v.source, v.l, "%s has unit %q, not %%", detName, det.OrigUnit)
	}
	return det.Base, true, nil
}

// sol is the two SOL throughputs, true when the launch has both.
func (v launchValues) sol() (sm, mem float64, ok bool, err error) {
	sm, okSM, err := v.percent(SMThroughputMetric, v.detSM, detailsSMName)
	if err != nil {
		return 0, 0, false, err
	}
	mem, okMem, err := v.percent(MemThroughputMetric, v.detMem, detailsMemName)
	if err != nil {
		return 0, 0, false, err
	}
	if !okSM || !okMem {
		return 0, 0, false, nil
	}
	return sm, mem, true, nil
}

// flops is the launch's floating-point (and integer tensor) ops: the
// tensor-core ops, then the non-tensor ones added in fpOps order (a fixed
// order, so the sum is the same every run), each part apart too;
// hasFLOPs false when it has no counter of either.
func (v launchValues) flops() (flopCounts, error) {
	tensor, has, err := v.tensorOps()
	if err != nil {
		return flopCounts{}, err
	}
	f := flopCounts{flops: tensor, tensor: tensor, hasFLOPs: has}
	cycles, okCycles, err := v.get(SMSPCyclesMetric, "cycle")
	if err != nil {
		return flopCounts{}, err
	}
	for _, o := range fpOps {
		n, ok, err := v.fpInstructions(o.op, cycles, okCycles)
		if err != nil {
			return flopCounts{}, err
		}
		if ok {
			f.flops += o.weight * n
			f.fp += o.weight * n
			if o.fp32 {
				f.fp32 += o.weight * n
			}
			f.hasFLOPs = true
		}
	}
	return f, nil
}

// tensorOps sums the tensor-core ops (sm__ops_path_tensor_src_<type>.sum)
// in the order of their types. A column whose type extends another present
// one (fp8_sparsity_off beside fp8, fp16_dst_fp32 beside fp16) is a
// breakdown of it and is not added again.
func (v launchValues) tensorOps() (float64, bool, error) {
	var tensor []string
	for name, val := range v.vals {
		if val.Valid && strings.HasPrefix(name, tensorPrefix) && strings.HasSuffix(name, tensorSuffix) &&
			!strings.Contains(strings.TrimSuffix(strings.TrimPrefix(name, tensorPrefix), tensorSuffix), ".") {
			tensor = append(tensor, strings.TrimSuffix(strings.TrimPrefix(name, tensorPrefix), tensorSuffix))
		}
	}
	slices.Sort(tensor) // a fixed order, so the sum is the same every run
	var sum float64
	has := false
	for _, t := range tensor {
		if slices.ContainsFunc(tensor, func(o string) bool { return strings.HasPrefix(t, o+"_") }) {
			continue
		}
		val := v.vals[tensorPrefix+t+tensorSuffix]
		if val.Unit != "" {
			return 0, false, launchError(v.source, v.l, "%s has unit %q, not a plain count", tensorPrefix+t+tensorSuffix, val.OrigUnit)
		}
		sum += val.Base
		has = true
	}
	return sum, has, nil
}

// fpInstructions is the thread instructions of one non-tensor
// floating-point op: its count when exported, else its per-cycle rate
// times the elapsed SMSP cycles (how ncu's roofline computes them), when
// those were measured (okCycles).
func (v launchValues) fpInstructions(op string, cycles float64, okCycles bool) (float64, bool, error) {
	for _, name := range fpCountNames(op) {
		if n, ok, err := v.get(name, "inst"); err != nil || ok {
			return n, ok, err
		}
	}
	if !okCycles {
		return 0, false, nil
	}
	rate, ok, err := v.get(fpRateName(op), "inst/cycle")
	if err != nil || !ok {
		return 0, false, err
	}
	return rate * cycles, true, nil
}

// dramBytes is the launch's DRAM traffic: dram__bytes.sum, else the DRAM
// rate times its duration durNS.
func (v launchValues) dramBytes(durNS float64) (float64, bool, error) {
	if b, ok, err := v.get(DRAMBytesMetric, "byte"); err != nil || ok {
		return b, ok, err
	}
	r, ok, err := v.get(DRAMRateMetric, "byte/second")
	if err != nil || !ok {
		return 0, false, err
	}
	return r * durNS * 1e-9, true, nil
}

type metricAcc struct {
	m         Metrics
	solW      float64
	smW, memW float64
	roof      int             // launches with FLOPs and DRAM bytes
	counted   int             // launches with FLOPs
	configs   map[string]bool // ConfigKey of each launch
}

// Accumulator sums launches into one Metrics per kernel name, one launch
// at a time. It is an model.Handler, so that one ncu.Scan of an export can
// feed the classification and other results.
type Accumulator struct {
	accs map[string]*metricAcc
	// checked is the export whose columns were last checked.
	checked *model.Export
}

// NewAccumulator returns an empty Accumulator.
func NewAccumulator() *Accumulator { return &Accumulator{accs: map[string]*metricAcc{}} }

// Launch adds one launch of x. The first launch of an export also checks
// its columns: a raw page must be read with ncu.Options{Metrics: Columns()}. A launch without a
// duration or with a metric in a unit this package does not read is a
// positioned *model.SyntaxError.
func (a *Accumulator) Launch(x *model.Export, l *model.Launch) error {
	if a.checked != x {
		a.checked = x
		if err := checkColumns(x, l); err != nil {
			return err
		}
	}
	ms, err := measureLaunch(x.Source, l)
	if err != nil {
		return err
	}
	k := a.accs[l.Kernel]
	if k == nil {
		k = &metricAcc{m: Metrics{Kernel: l.Kernel}, configs: map[string]bool{}}
		a.accs[l.Kernel] = k
	}
	k.add(ms)
	k.configs[ConfigKey(l.GridSize, l.BlockSize)] = true
	return nil
}

// add counts one launch's measure.
func (k *metricAcc) add(ms measure) {
	k.m.Launches++
	k.m.DurationNS += ms.durNS
	if ms.hasSOL {
		k.solW += ms.durNS
		k.smW += ms.durNS * ms.sm
		k.memW += ms.durNS * ms.mem
		k.m.HasSOL = true
	}
	if ms.hasFLOPs && ms.hasDRAM {
		k.roof++
	}
	if ms.hasFLOPs {
		k.counted++
	}
	k.m.FLOPs += ms.flops
	k.m.TensorOps += ms.tensor
	k.m.FPFLOPs += ms.fp
	k.m.FP32FLOPs += ms.fp32
	k.m.DRAMBytes += ms.dram
}

// metrics is the kernel's Metrics: duration-weighted SOL means, and FLOPs
// and DRAM bytes only when every launch had both.
func (k *metricAcc) metrics() *Metrics {
	m := k.m
	if m.HasSOL {
		if k.solW > 0 {
			m.SMPct, m.MemPct = k.smW/k.solW, k.memW/k.solW
		} else {
			// Launches of zero duration: an unweighted view is all there is.
			m.HasSOL = false
		}
	}
	m.HasRoofline = k.roof == m.Launches
	if !m.HasRoofline {
		m.FLOPs, m.DRAMBytes = 0, 0
	}
	m.HasFLOPs = k.counted == m.Launches
	if !m.HasFLOPs {
		m.TensorOps, m.FPFLOPs, m.FP32FLOPs = 0, 0, 0
	}
	m.Configs = slices.Sorted(maps.Keys(k.configs))
	return &m
}

// Metrics is every kernel's Metrics, by kernel name.
func (a *Accumulator) Metrics() map[string]*Metrics {
	out := make(map[string]*Metrics, len(a.accs))
	for name, k := range a.accs {
		out[name] = k.metrics()
	}
	return out
}

// MetricsFromReader reads every launch of r into one Metrics per kernel
// name, the name exactly as the kernel table keys it (so it joins
// kernels.json's kernel_name); launches of one name on several devices are summed. A raw
// page must be read with ncu.Options{Metrics: Columns()}. The first malformed row or launch ends
// the read with its positioned *model.SyntaxError.
func MetricsFromReader(r model.Launches, source string) (map[string]*Metrics, error) {
	a := NewAccumulator()
	if err := r.Feed(source, a)[0]; err != nil {
		return nil, err
	}
	return a.Metrics(), nil
}

// checkColumns refuses a raw page whose header holds a column the
// classification needs but the reader did not keep (l, the export's first
// launch, has what it kept), or one that counts toward FLOPs, DRAM bytes or
// SOL but that this package does not know (kept or not: a reader made for
// several consumers may keep it for another).
func checkColumns(x *model.Export, l *model.Launch) error {
	if x.Format != model.FormatRaw {
		return nil
	}
	kept := make(map[string]bool, len(l.Metrics))
	for _, m := range l.Metrics {
		kept[m.Name] = true
	}
	known := Columns()
	for _, h := range x.Header {
		if !wantedColumn.MatchString(h) {
			continue
		}
		if !slices.Contains(known, h) {
			return fmt.Errorf("%s: column %s counts toward FLOPs but package kernels does not know it: add its type to tensorTypes", x.Source, h)
		}
		if !kept[h] {
			return fmt.Errorf("%s: column %s was not read: make the reader with ncu.Options{Metrics: kernels.Columns()}", x.Source, h)
		}
	}
	return nil
}

// Sorted returns the metrics by summed duration, longest first, ties by name.
func Sorted(ms map[string]*Metrics) []*Metrics {
	out := make([]*Metrics, 0, len(ms))
	for _, m := range ms {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Metrics) int {
		switch {
		case a.DurationNS > b.DurationNS:
			return -1
		case a.DurationNS < b.DurationNS:
			return 1
		}
		return strings.Compare(a.Kernel, b.Kernel)
	})
	return out
}

// MeasuredUnit is the base unit (package model's) of a metric this package
// reads, or of the duration, as CUPTI's range profiler gives its value in
// the recorded run; false for any other metric.
func MeasuredUnit(name string) (string, bool) {
	switch name {
	case model.DurationMetric:
		return "ns", true
	case SMThroughputMetric, MemThroughputMetric:
		return "%", true
	case DRAMBytesMetric:
		return "byte", true
	case DRAMRateMetric:
		return "byte/second", true
	case SMSPCyclesMetric:
		return "cycle", true
	}
	for _, o := range fpOps {
		if slices.Contains(fpCountNames(o.op), name) {
			return "inst", true
		}
		if name == fpRateName(o.op) {
			return "inst/cycle", true
		}
	}
	if t, ok := strings.CutPrefix(name, tensorPrefix); ok && strings.HasSuffix(t, tensorSuffix) {
		return "", true
	}
	return "", false
}

// LibraryMetrics are the metrics deepprof's CUPTI library measures in the
// recorded run for a deep pass of preset roofline or not: the SOL
// throughputs and the duration (the bounds; ncu's basic set), and for the
// roofline the DRAM bytes and the FLOP counters (the non-tensor
// instruction counts, the tensor-core ops of every source type this
// package knows; a device without one of them measures the others).
func LibraryMetrics(roofline bool) []string {
	out := []string{SMThroughputMetric, MemThroughputMetric, model.DurationMetric}
	if !roofline {
		return out
	}
	out = append(out, DRAMBytesMetric)
	for _, o := range fpOps {
		out = append(out, fpCountNames(o.op)[0])
	}
	for _, t := range tensorTypes {
		out = append(out, tensorPrefix+t+tensorSuffix)
	}
	return out
}
