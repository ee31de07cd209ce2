package phases

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// KernelTable is the kernel table of every launch keep admits, with each
// kernel's spread; source names the timeline in errors.
func KernelTable(tl *timeline.Timeline, source string, keep func(*model.Launch) bool) (*model.KernelTable, error) {
	agg := model.NewKernelAggregator()
	agg.KeepSpread()
	for l := range tl.Launches() {
		if !keep(l) {
			continue
		}
		if err := agg.Add(source, l); err != nil {
			return nil, err
		}
	}
	tab := agg.Table(source)
	return &tab, nil
}

// SteadyTables are the kernel tables of the launches a query admits, made
// in one pass (KernelTables).
type SteadyTables struct {
	// All is every admitted launch, with each kernel's spread
	// (KernelTable's).
	All *model.KernelTable
	// Steady is those that lie in no warm-up, with each kernel's spread;
	// nil unless asked for.
	Steady *model.KernelTable
	// Warmup is those that lie in one (Steady.LaunchInWarmup); Measured is
	// how many of them lie in an instance left out for one of the
	// library's measurements (Steady.LaunchMeasured).
	Warmup   *model.KernelTable
	Measured int64
}

// KernelTables is, in one pass over the launches keep admits, KernelTable
// of them all, of those that lie in a warm-up (steady's, phases of
// domains) and, where withSteady, of those that lie in none.
func KernelTables(tl *timeline.Timeline, source string, keep func(*model.Launch) bool, steady *Steady, domains []string, withSteady bool) (SteadyTables, error) {
	all, kept, warm := model.NewKernelAggregator(), model.NewKernelAggregator(), model.NewKernelAggregator()
	all.KeepSpread()
	kept.KeepSpread()
	var measured int64
	for k, l := range tl.KernelLaunches() {
		if !keep(l) {
			continue
		}
		if err := all.Add(source, l); err != nil {
			return SteadyTables{}, err
		}
		a := kept
		if steady.LaunchInWarmup(k.Range, k.Start, domains) {
			a = warm
			if steady.LaunchMeasured(k.Range, domains) {
				measured++
			}
		} else if !withSteady {
			continue
		}
		if err := a.Add(source, l); err != nil {
			return SteadyTables{}, err
		}
	}
	t, w := all.Table(source), warm.Table(source)
	out := SteadyTables{All: &t, Warmup: &w, Measured: measured}
	if withSteady {
		st := kept.Table(source)
		out.Steady = &st
	}
	return out, nil
}

// Target is a kernel for the deep pass to profile by its exact (mangled)
// name, and the launch configurations it ran with: ncu's per-launch-config
// filter mode profiles each one.
type Target struct {
	Name    string // as the kernel table writes it
	Mangled string
	// Configs is the number of its launch configurations: grid, block and
	// dynamic shared memory, which ncu tells apart.
	Configs int
	NS      int64 // its launches' time
	// ConfigNS is each configuration's time, in the order of their first
	// launch.
	ConfigNS []int64
	// Order is the configuration (an index into ConfigNS) of each of its
	// launches in the order the program made them (CUPTI's correlation
	// ids), those keep does not admit too: Order[i] is the configuration
	// of what ncu's --kernel-id calls invocation i+1, -1 for one that
	// no admitted launch has. It stops at the process's first pause of
	// the recording (FirstPause): what the program launched while paused
	// is not known. Nil where the count is not known: several processes
	// launched it (ncu counts each process's invocations apart), or its
	// process's records before the pause dropped some or hold CUDA graph
	// launches (several kernels of one launch call), or none is before
	// the pause.
	Order []int32
	// Admitted says, for each launch of Order, whether keep admitted it.
	Admitted []bool
	// Reach says, for each launch of Order, how far into its process it
	// lies: what ncu must follow of the program to profile it.
	Reach []Reach
	// FirstOutside is the number of its launch configurations (every one
	// it ran in, as ncu tells them apart) whose first launch keep does not
	// admit: the launches a pass of one launch a configuration profiles
	// outside keep's scope where ncu cannot filter on it. -1 where that
	// is not known: several processes launched it, its process's records
	// dropped some, or it was launched while the recording was paused.
	FirstOutside int
}

// Reach is how far into its process a launch lies: Launches is the
// number of kernel launches the process made before it (each one ncu
// matches its filters against), NS the time from the process's first
// record to its launch call.
type Reach struct {
	Launches int
	NS       int64
}

// Targets are the kernels of names (the kernel table's), each mangled name
// of theirs a Target, among the launches keep admits: in the order of
// names, the mangled names of one name by time, most first. A mangled name
// with no launch keep admits is none.
func Targets(tl *timeline.Timeline, names []string, keep func(*model.Launch) bool) []Target {
	return targets(tl, names, keep, false)
}

// TargetsWithin is Targets where keep's scope is one ncu cannot filter on
// (phases inferred from the kernel stream: the program pushed no range),
// so that a launch profiled must be one keep admits: in Order, a launch
// keep does not admit is -1 whatever its configuration.
func TargetsWithin(tl *timeline.Timeline, names []string, keep func(*model.Launch) bool) []Target {
	return targets(tl, names, keep, true)
}

func targets(tl *timeline.Timeline, names []string, keep func(*model.Launch) bool, within bool) []Target {
	type config struct {
		grid, block cupti.Dim3
		shared      uint32
	}
	type launch struct {
		correlation uint32
		config      config
		admitted    bool
		at          int64
	}
	type acc struct {
		configs  map[config]int32
		configNS []int64
		ns       int64
		pid      int64
		pids     int
		launches []launch
		// uncounted: a process's records do not number its launches
		// (countable); unknown: nor say each configuration's first
		// launch (records dropped, or launches made while paused)
		uncounted, unknown bool
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	pauses := map[int64]int64{}
	uncounted, dropped := map[int64]bool{}, map[int64]bool{}
	for _, p := range tl.Processes {
		at, paused := FirstPause(p)
		if paused {
			pauses[p.Header.PID] = at
		}
		uncounted[p.Header.PID] = !countable(p, at, paused)
		dropped[p.Header.PID] = slices.ContainsFunc(p.Notes, func(n cupti.Note) bool { return n.Key == "dropped_records" })
	}
	// order is each process's launch calls' correlation ids, sorted;
	// first its earliest record.
	order := map[int64][]uint32{}
	first := map[int64]int64{}
	for _, p := range tl.Processes {
		ids := make([]uint32, 0, len(p.Kernels))
		for i := range p.Kernels {
			ids = append(ids, p.Kernels[i].Correlation)
		}
		slices.Sort(ids)
		order[p.Header.PID] = slices.Compact(ids)
		first[p.Header.PID] = p.Header.StartNS
		if o, ok := p.Origin(); ok && (p.Header.StartNS == 0 || o < p.Header.StartNS) {
			first[p.Header.PID] = o
		}
	}
	byName := map[string]map[string]*acc{}
	for k, l := range tl.KernelLaunches() {
		name := k.Name()
		if !want[name] {
			continue
		}
		m := byName[name]
		if m == nil {
			m = map[string]*acc{}
			byName[name] = m
		}
		a := m[k.Mangled]
		if a == nil {
			a = &acc{configs: map[config]int32{}, pid: l.ProcessID, pids: 1}
			m[k.Mangled] = a
		}
		if l.ProcessID != a.pid {
			a.pid = l.ProcessID
			a.pids++
		}
		c := config{k.Grid, k.Block, k.DynamicShared}
		at := k.Start
		if k.API != nil {
			at = k.API.Start
		}
		admitted := keep(l)
		if pause, ok := pauses[l.ProcessID]; !ok || at < pause {
			a.launches = append(a.launches, launch{k.Correlation, c, admitted, at})
		} else {
			a.unknown = true
		}
		a.uncounted = a.uncounted || uncounted[l.ProcessID]
		a.unknown = a.unknown || dropped[l.ProcessID]
		if !admitted {
			continue
		}
		i, ok := a.configs[c]
		if !ok {
			i = int32(len(a.configNS))
			a.configs[c] = i
			a.configNS = append(a.configNS, 0)
		}
		a.configNS[i] += k.End - k.Start
		a.ns += k.End - k.Start
	}
	var out []Target
	for _, n := range names {
		var ts []Target
		for mangled, a := range byName[n] {
			if len(a.configs) == 0 {
				continue
			}
			t := Target{Name: n, Mangled: mangled, Configs: len(a.configs), NS: a.ns, ConfigNS: a.configNS, FirstOutside: -1}
			// in the order the program made them; the kernels of one
			// graph launch (one correlation id) in start order
			slices.SortStableFunc(a.launches, func(x, y launch) int { return cmp.Compare(x.correlation, y.correlation) })
			if a.pids == 1 && !a.unknown {
				t.FirstOutside = 0
				seen := map[config]bool{}
				for _, l := range a.launches {
					if !seen[l.config] {
						seen[l.config] = true
						if !l.admitted {
							t.FirstOutside++
						}
					}
				}
			}
			if a.pids == 1 && !a.uncounted && len(a.launches) > 0 {
				t.Order = make([]int32, len(a.launches))
				t.Admitted = make([]bool, len(a.launches))
				t.Reach = make([]Reach, len(a.launches))
				for i, l := range a.launches {
					c, ok := a.configs[l.config]
					if !ok || within && !l.admitted {
						c = -1
					}
					t.Order[i], t.Admitted[i] = c, l.admitted
					t.Reach[i] = Reach{Launches: launchesBefore(order[a.pid], l.correlation), NS: l.at - first[a.pid]}
				}
				t.ConfigNS = renumber(t.Order, a.configNS)
			}
			ts = append(ts, t)
		}
		slices.SortFunc(ts, func(x, y Target) int { return cmp.Or(cmp.Compare(y.NS, x.NS), cmp.Compare(x.Mangled, y.Mangled)) })
		out = append(out, ts...)
		delete(byName, n)
	}
	return out
}

// launchesBefore is the number of ids of sorted before id.
func launchesBefore(sorted []uint32, id uint32) int {
	i, _ := slices.BinarySearch(sorted, id)
	return i
}

// FirstPause is when the workload first paused the recording of p (the
// library's "recording" note "paused <ns>", CUPTI's clock), if it did.
func FirstPause(p *timeline.Process) (int64, bool) {
	first, found := int64(0), false
	for _, n := range p.Notes {
		v, ok := strings.CutPrefix(n.Value, "paused ")
		if n.Key != "recording" || !ok {
			continue
		}
		if at, err := strconv.ParseInt(v, 10, 64); err == nil && (!found || at < first) {
			first, found = at, true
		}
	}
	return p.Cut(first), found
}

// countable reports whether p's records number each kernel's launches as
// ncu would up to its first pause (at, if paused): no records dropped
// before it (dropped_records notes come with no time: any counts), and no
// CUDA graph launch (two kernels of one correlation id) before it.
func countable(p *timeline.Process, at int64, paused bool) bool {
	for _, n := range p.Notes {
		if n.Key == "dropped_records" {
			return false
		}
	}
	seen := make(map[uint32]bool, len(p.Kernels))
	for i := range p.Kernels {
		k := &p.Kernels[i]
		if paused && k.Start >= at {
			continue
		}
		if seen[k.Correlation] {
			return false
		}
		seen[k.Correlation] = true
	}
	return true
}

// renumber numbers the configurations of order by their first launch in
// it, rewriting order in place, and returns ns in that numbering.
func renumber(order []int32, ns []int64) []int64 {
	to := make([]int32, len(ns))
	for i := range to {
		to[i] = -1
	}
	out := make([]int64, 0, len(ns))
	for i, c := range order {
		if c < 0 {
			continue
		}
		if to[c] < 0 {
			to[c] = int32(len(out))
			out = append(out, ns[c])
		}
		order[i] = to[c]
	}
	return out
}

// ProcessRef names one CUDA process of the timeline.
type ProcessRef struct {
	ID   int64
	Name string // its executable, as the record file's header has it
}

// TopProcesses are the processes of the CUPTI timeline that launched the
// top kernels, and how far ncu must count to reach the last of them.
type TopProcesses struct {
	// Processes launched a kernel whose function (model.FunctionName) is a
	// top one; by id.
	Processes []ProcessRef
	// EarlierLaunches is the most launches of one launch configuration
	// (function, grid, block) of a top kernel that all but the last of
	// those processes made, taken in the order of their first such launch:
	// ncu counts --launch-count over every process it follows, so a count
	// below it leaves the last process unprofiled when the processes run
	// one after another (a parent that waits for its child).
	EarlierLaunches int
}

// TopProcessesOf is TopProcesses for the top kernels' functions.
func TopProcessesOf(tl *timeline.Timeline, functions []string) TopProcesses {
	type config struct {
		function    string
		grid, block cupti.Dim3
	}
	type proc struct {
		ProcessRef
		first  int64
		counts map[config]int
	}
	var ps []proc
	for _, p := range tl.Processes {
		pr := proc{ProcessRef: ProcessRef{ID: p.Header.PID, Name: p.Header.Exe}, counts: map[config]int{}}
		names := functionNames{}
		for i := range p.Kernels {
			k, fn := &p.Kernels[i], p.Fn(&p.Kernels[i])
			f := names.of(fn)
			if !slices.Contains(functions, f) {
				continue
			}
			if len(pr.counts) == 0 || k.Start < pr.first {
				pr.first = k.Start
			}
			pr.counts[config{f, fn.Grid, fn.Block}]++
		}
		if len(pr.counts) > 0 {
			ps = append(ps, pr)
		}
	}
	var out TopProcesses
	slices.SortFunc(ps, func(a, b proc) int { return cmp.Compare(a.first, b.first) })
	earlier := map[config]int{}
	for i, p := range ps {
		out.Processes = append(out.Processes, p.ProcessRef)
		if i == len(ps)-1 {
			break
		}
		for c, n := range p.counts {
			earlier[c] += n
			out.EarlierLaunches = max(out.EarlierLaunches, earlier[c])
		}
	}
	slices.SortFunc(out.Processes, func(a, b ProcessRef) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// SameTopLaunches reports whether every process that launched a kernel of
// one of functions (model.FunctionName) launched the same such kernels in
// the same launch configurations (name, grid, block, dynamic shared
// memory: what ncu tells apart), as the ranks of a tensor-parallel program
// do; and how many processes those are.
func SameTopLaunches(tl *timeline.Timeline, functions []string) (same bool, processes int) {
	type config struct {
		name        string
		grid, block cupti.Dim3
		shared      uint32
	}
	var first map[config]bool
	same = true
	for _, p := range tl.Processes {
		mine := map[config]bool{}
		names := functionNames{}
		for i := range p.Kernels {
			if f := p.Fn(&p.Kernels[i]); slices.Contains(functions, names.of(f)) {
				mine[config{f.Name(), f.Grid, f.Block, f.DynamicShared}] = true
			}
		}
		if len(mine) == 0 {
			continue
		}
		processes++
		if first == nil {
			first = mine
		} else if !maps.Equal(first, mine) {
			same = false
		}
	}
	return same && processes > 0, processes
}

// ProfiledRanges is the one rule for the NVTX ranges the kernel table and
// the deep pass cover, decided from what occurred in the run: include (the
// configured ranges, nvtx.include) when every one of them occurred; else
// the ones that occurred and every outermost range of the domain that
// phases names a prefill or a decode (a program's "decode" range beside
// its "prefill", where the defaults name "decode_all"); else, when none of
// those occurred, every outermost range of the domain; nil (the whole
// run) when the program opened none. changed reports whether the result is
// not include.
func ProfiledRanges(tl *timeline.Timeline, include []string, domain string, phases model.Names) (ranges []string, changed bool) {
	top := TopRanges(tl, domain)
	var occurred []string
	for _, p := range include {
		lv, err := model.Configured(p, domain)
		if err == nil && len(lv) > 0 && slices.Contains(top, lv[0].String()) {
			occurred = append(occurred, p)
		}
	}
	if len(occurred) == len(include) {
		return include, false
	}
	out := occurred
	for _, t := range top {
		if phases.Of(t, "") != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		out = top
	}
	return out, true
}

// TopRanges are the names of the outermost push/pop NVTX ranges of the
// CUPTI timeline (every process), in order of first start: what a program
// marked, for a session whose configured ranges did not occur.
func TopRanges(tl *timeline.Timeline, domain string) []string {
	var out []string
	for _, s := range Stages(tl, nil, nil) {
		if s.Kind == timeline.PushPop && s.Depth == 1 && s.Domain == domain && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// functionNames is model.FunctionName of a process's kernels, each found
// once: a query over every launch meets each function many times, and its
// name can run to kilobytes.
type functionNames map[*timeline.Function]string

func (m functionNames) of(f *timeline.Function) string {
	n, ok := m[f]
	if !ok {
		n = model.FunctionName(f.Name())
		m[f] = n
	}
	return n
}
