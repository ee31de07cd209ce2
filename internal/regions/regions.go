package regions

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// MaxDepth is the deepest nesting the report lists (model.MaxRangeDepth):
// a launch in ranges nested deeper counts in its level-MaxDepth range (a
// note says how many).
const MaxDepth = model.MaxRangeDepth

type spec struct {
	group string
	MetricSpec
}

type metricKey struct{ section, name string }

type specRef struct {
	idx  int
	pref int // 0 raw, 1 details
}

type metricAcc struct {
	set          bool
	unit         string
	dim          model.Dimension
	sum, wsum, w float64
	n            int64
}

type node struct {
	level    model.Range
	levels   []model.Range // the stack from the outermost level to this one
	parent   *node
	children []*node
	byLevel  map[model.Range]*node
	depth    int
	incNS    float64
	excNS    float64
	incN     int64
	excN     int64
	metrics  []metricAcc
	kernels  *model.KernelAggregator
	key      string
	name     string
	selected bool
}

type scopeKey struct {
	pid    int64
	device model.DeviceID
}

type scopeAcc struct {
	key      scopeKey
	procName string
	root     *node
	launches int64
	ns       float64
	outN     int64
	outNS    float64
}

// Aggregator sums launches into regions, one launch at a time.
type Aggregator struct {
	cfg    Config
	filter *filter // kernel names
	// regionFilter chooses the regions listed; regionNames are every
	// region's name, listed or not, for UnmatchedError.
	regionFilter *filter
	regionNames  []string
	regionSeen   map[string]bool

	specs  []spec
	lookup map[metricKey]specRef
	seen   []bool
	// fromDetails marks specs read from a details row.
	fromDetails []bool
	mvals       []mval
	// msum and mwsum are each spec's sums of absolute values over every
	// launch, plain and weighted by duration: checked to stay finite.
	msum, mwsum []float64
	dims        map[string]model.Dimension

	scopes map[scopeKey]*scopeAcc
	agg    *scopeAcc
	// aggTree says the aggregate has a tree of regions of its own: once a
	// second scope is met, with the aggregate on. Until then the one
	// scope's tree is the aggregate's (the same launches added in the same
	// order make the same sums), and the report lists its regions once,
	// for both.
	aggTree bool

	launches, selected int64
	ns                 float64
	outN               int64
	outNS              float64
	hasNVTX            bool
	inRange            int64
	startStop          bool
	deeper             int64 // launches in ranges nested deeper than MaxDepth
	rangeN, kernelN    int64
	filteredN          int64
	filteredNS         float64
	unitClash          map[string]bool

	// export is the export Launch last read, and rangeReplay whether it is
	// a range replay (RangeReplay of its header).
	export      *model.Export
	rangeReplay bool
}

type mval struct {
	ok   bool
	pref int
	v    float64
	unit string
	dim  model.Dimension
}

// New returns an Aggregator for cfg, or a *PatternError for a pattern that
// does not compile.
func New(cfg Config) (*Aggregator, error) {
	f, err := newFilter(TargetKernel, cfg.Include, cfg.Exclude)
	if err != nil {
		return nil, err
	}
	rf, err := newFilter(TargetRegion, cfg.RegionInclude, cfg.RegionExclude)
	if err != nil {
		return nil, err
	}
	a := &Aggregator{cfg: cfg, filter: f, regionFilter: rf, lookup: map[metricKey]specRef{}, dims: map[string]model.Dimension{},
		scopes: map[scopeKey]*scopeAcc{}, unitClash: map[string]bool{}}
	for _, g := range cfg.Groups {
		for _, m := range g.Metrics {
			i := len(a.specs)
			a.specs = append(a.specs, spec{group: g.Name, MetricSpec: m})
			if m.Raw != "" {
				if _, dup := a.lookup[metricKey{"", m.Raw}]; !dup {
					a.lookup[metricKey{"", m.Raw}] = specRef{i, 0}
				}
			}
			if m.Details != "" {
				if _, dup := a.lookup[metricKey{m.Section, m.Details}]; !dup {
					a.lookup[metricKey{m.Section, m.Details}] = specRef{i, 1}
				}
			}
		}
	}
	a.seen = make([]bool, len(a.specs))
	a.fromDetails = make([]bool, len(a.specs))
	a.mvals = make([]mval, len(a.specs))
	a.msum, a.mwsum = make([]float64, len(a.specs)), make([]float64, len(a.specs))
	a.agg = newScope(scopeKey{})
	return a, nil
}

func newScope(k scopeKey) *scopeAcc {
	return &scopeAcc{key: k, root: &node{byLevel: map[model.Range]*node{}}}
}

// RangeReplay reports whether an export's header is that of a range or
// app-range replay report: it has no Block Size column (ranges have no
// launch configuration). Call it once per export, with Reader.Header.
func RangeReplay(header []string) bool {
	return len(header) > 0 && !slices.Contains(header, "Block Size")
}

// IsRangeResult reports whether a result is a whole NVTX range: its export
// is a range replay (RangeReplay of its header) and its Kernel Name is the
// literal "range".
func IsRangeResult(rangeReplay bool, l *model.Launch) bool {
	return rangeReplay && l.Kernel == "range"
}

// Add counts one result. asRange says it is a whole range (IsRangeResult).
// A result without a duration, or whose device is not an index, is an error
// that names its line.
func (a *Aggregator) Add(source string, l *model.Launch, asRange bool) error {
	if !l.Duration.Valid {
		return &model.SyntaxError{File: source, Line: l.Line, Msg: fmt.Sprintf(
			"launch %d has no duration (no %s, nor %s in %q)", l.ID, model.DurationMetric, model.SOLDurationMetric, model.SOLSection)}
	}
	dev := l.Device
	var levels []model.Range
	if l.NVTX != nil {
		a.hasNVTX = true
		levels = l.NVTX.Levels
	}
	if l.StartStop != "" {
		a.startStop = true
	}
	if len(levels) > MaxDepth {
		// Counted in their level-MaxDepth range: the report (and the
		// memory and time it takes) no longer grows with the square of a
		// runaway nesting.
		levels = levels[:MaxDepth]
		a.deeper++
	}
	if asRange {
		a.rangeN++
		if len(levels) > 0 {
			c := *l
			c.Kernel = l.NVTX.Path()
			l = &c
		}
	} else {
		a.kernelN++
	}
	ns := l.Duration.Base
	// Every duration sum of the report (a scope's, a region's, a kernel's)
	// is at most the total: a total that stays finite keeps them finite.
	if err := model.AddFinite(&a.ns, ns, source, l, l.DurationTotal); err != nil {
		return err
	}
	a.launches++
	sk := scopeKey{l.ProcessID, dev}
	sc := a.scopes[sk]
	if sc == nil {
		if len(a.scopes) == 1 && a.cfg.Aggregate {
			// the aggregate's tree, the first scope's until now, apart
			for _, first := range a.scopes {
				a.agg.root, a.aggTree = first.root.clone(nil), true
			}
		}
		sc = newScope(sk)
		sc.procName = l.ProcessName
		a.scopes[sk] = sc
	}
	selected := a.filter.selects(l.Kernel)
	for _, s := range []*scopeAcc{sc, a.agg} {
		s.launches++
		s.ns += ns
	}
	// the trees the launch is counted in: its scope's, and the
	// aggregate's where it has one of its own
	trees := [2]*scopeAcc{sc, a.agg}
	nt := 1
	if a.aggTree {
		nt = 2
	}
	if len(levels) > 0 {
		a.inRange++
	}
	if !selected {
		a.filteredN++
		a.filteredNS += ns
		// The regions are still met: create them, count nothing.
		for _, s := range trees[:nt] {
			cur := s.root
			for _, lv := range levels {
				cur = cur.child(lv, len(a.specs))
			}
		}
		return nil
	}
	a.selected++
	if len(levels) == 0 {
		a.outN++
		a.outNS += ns
		for _, s := range []*scopeAcc{sc, a.agg} {
			s.outN++
			s.outNS += ns
		}
		return nil
	}
	a.metricValues(l)
	if err := a.metricSums(source, l, ns); err != nil {
		return err
	}
	for _, s := range trees[:nt] {
		cur := s.root
		for _, lv := range levels {
			cur = cur.child(lv, len(a.specs))
			cur.incNS += ns
			cur.incN++
			cur.selected = true
			for i := range a.mvals {
				if a.mvals[i].ok {
					cur.metrics[i].add(a.mvals[i], ns, a.specs[i], a.unitClash)
				}
			}
			if err := cur.kernels.Add(source, l); err != nil {
				return err
			}
		}
		cur.excNS += ns
		cur.excN++
	}
	return nil
}

// metricValues fills a.mvals with the launch's values of each spec.
func (a *Aggregator) metricValues(l *model.Launch) {
	for i := range a.mvals {
		a.mvals[i] = mval{}
	}
	for _, m := range l.Metrics {
		ref, ok := a.lookup[metricKey{m.Section, m.Name}]
		if !ok || !m.Value.Valid {
			continue
		}
		cur := &a.mvals[ref.idx]
		if cur.ok && cur.pref <= ref.pref {
			continue
		}
		dim, ok := a.dims[m.Value.OrigUnit]
		if !ok {
			dim = model.Lookup(m.Value.OrigUnit).Dim
			a.dims[m.Value.OrigUnit] = dim
		}
		*cur = mval{ok: true, pref: ref.pref, v: m.Value.Base, unit: m.Value.Unit, dim: dim}
		a.seen[ref.idx] = true
		if ref.pref == 1 {
			a.fromDetails[ref.idx] = true
		}
	}
}

// metricSums adds the launch's metric values (a.mvals), and those averaged
// over launches weighted by its duration ns, to the sums over every launch, or returns the
// positioned error of one that would pass the largest float64: a region's
// sums are at most these.
func (a *Aggregator) metricSums(source string, l *model.Launch, ns float64) error {
	for i := range a.mvals {
		v := a.mvals[i]
		if !v.ok {
			continue
		}
		// The metric as the launch wrote it, for an error only.
		quoted := func() string {
			var orig model.Value
			name := a.specs[i].Source()
			for _, m := range l.Metrics {
				if ref, ok := a.lookup[metricKey{m.Section, m.Name}]; ok && ref.idx == i && ref.pref == v.pref {
					orig, name = m.Value, m.Name
					if m.Section != "" {
						name = m.Section + ": " + m.Name
					}
				}
			}
			return model.Quote(name, orig)
		}
		label := a.specs[i].Label
		if err := model.AddFinite(&a.msum[i], v.v, source, l, func() (string, string) {
			return quoted(), "the sum of " + label + " over the launches"
		}); err != nil {
			return err
		}
		if AggregationOf(v.dim) == facts.Sum {
			continue // its weighted sum is not used
		}
		if err := model.AddFinite(&a.mwsum[i], v.v*ns, source, l, func() (string, string) {
			value, _ := l.DurationTotal()
			return quoted() + " times the launch's duration (" + value + ")", "the duration-weighted sum of " + label + " over the launches"
		}); err != nil {
			return err
		}
	}
	return nil
}

func (m *metricAcc) add(v mval, ns float64, sp spec, clash map[string]bool) {
	if !m.set {
		m.set, m.unit, m.dim = true, v.unit, v.dim
	} else if v.unit != m.unit {
		clash[sp.Label] = true
		return
	}
	m.sum += v.v
	m.wsum += v.v * ns
	m.w += ns
	m.n++
}

func (m *metricAcc) value() (float64, facts.Aggregation) {
	agg := AggregationOf(m.dim)
	if agg == facts.Sum {
		return m.sum, agg
	}
	if m.w > 0 {
		return m.wsum / m.w, agg
	}
	return m.sum / float64(max(m.n, 1)), agg
}

// clone is a copy of the tree under n, itself included, that counts on
// apart from it, with parent as its parent.
func (n *node) clone(parent *node) *node {
	c := *n
	c.parent = parent
	c.metrics = slices.Clone(n.metrics)
	if n.kernels != nil {
		c.kernels = n.kernels.Clone()
	}
	c.byLevel = make(map[model.Range]*node, len(n.byLevel))
	c.children = make([]*node, len(n.children))
	for i, ch := range n.children {
		cc := ch.clone(&c)
		c.children[i] = cc
		c.byLevel[ch.level] = cc
	}
	return &c
}

func (n *node) child(lv model.Range, nspecs int) *node {
	c := n.byLevel[lv]
	if c == nil {
		c = &node{level: lv, parent: n, byLevel: map[model.Range]*node{}, depth: n.depth + 1,
			metrics: make([]metricAcc, nspecs), kernels: model.NewKernelAggregator()}
		c.levels = append(slices.Clip(n.levels), lv)
		c.name = model.Path(c.levels)
		if n.depth == 0 {
			c.key = levelKey(lv)
		} else {
			c.key = n.key + "\x01" + levelKey(lv)
		}
		n.byLevel[lv] = c
		n.children = append(n.children, c)
	}
	return c
}

// levelKey writes a level as part of a node key. Keys only name nodes of one
// tree whose children are told apart by model.Range itself, so the key is only
// used to match the same region across scopes (directory names).
func levelKey(lv model.Range) string { return lv.Domain + "\x00" + lv.Name }

// Report returns the regions found so far. With the aggregate on and one
// scope, the scope's Regions are the Aggregate slice itself (the same
// regions, held once): read them, do not change them.
func (a *Aggregator) Report(source string) *facts.RegionReport {
	rep := &facts.RegionReport{
		Source: source, Launches: a.launches, ProfiledMS: a.ns / 1e6, Selected: a.selected,
		OutsideLaunches: a.outN, OutsideMS: a.outNS / 1e6,
		Include: nonNil(a.cfg.Include), Exclude: nonNil(a.cfg.Exclude),
		RegionInclude: a.cfg.RegionInclude, RegionExclude: a.cfg.RegionExclude,
		MetricGroups: []string{}, TopKernels: a.cfg.TopKernels,
		AggregateEnabled: a.cfg.Aggregate, Notes: []string{}, Aggregate: []facts.Region{}, Scopes: []facts.RegionScope{},
	}
	for _, g := range a.cfg.Groups {
		rep.MetricGroups = append(rep.MetricGroups, g.Name)
	}
	switch {
	case a.rangeN > 0 && a.kernelN > 0:
		rep.Results = facts.ResultsMixed
	case a.rangeN > 0:
		rep.Results = facts.ResultsRanges
	default:
		rep.Results = facts.ResultsKernels
	}
	rep.RegionProfiling = a.inRange > 0

	a.regionNames, a.regionSeen = nil, map[string]bool{}
	dirs := map[string]string{}
	taken := map[string]bool{}
	shared := a.cfg.Aggregate && !a.aggTree // one scope at most: its tree is the aggregate's
	if a.cfg.Aggregate {
		agg := a.agg
		if shared && len(a.scopes) == 1 {
			c := *a.agg
			for _, s := range a.scopes {
				c.root = s.root
			}
			agg = &c
		}
		rep.Aggregate = a.regions(agg, dirs, taken)
	}
	keys := make([]scopeKey, 0, len(a.scopes))
	for k := range a.scopes {
		keys = append(keys, k)
	}
	sortScopes(keys)
	for _, k := range keys {
		s := a.scopes[k]
		regs := rep.Aggregate // the one scope's regions, held once
		if !shared {
			regs = a.regions(s, dirs, taken)
		}
		rep.Scopes = append(rep.Scopes, facts.RegionScope{ProcessID: k.pid, ProcessName: s.procName, Device: k.device,
			Launches: s.launches, ProfiledMS: s.ns / 1e6, OutsideLaunches: s.outN, OutsideMS: s.outNS / 1e6,
			Regions: regs})
	}
	rep.Notes = a.notes()
	return rep
}

// unmatched is the *UnmatchedError of the patterns that matched nothing
// when the last report was made, or nil.
func (a *Aggregator) unmatched(source string) error {
	misses := append(a.filter.misses(), a.regionFilter.misses()...)
	if len(misses) == 0 {
		return nil
	}
	return &UnmatchedError{Source: source, Misses: misses, Regions: a.regionNames, KernelNames: a.filter.names}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// sortScopes orders scopes by process ID, then device.
func sortScopes(keys []scopeKey) {
	slices.SortFunc(keys, func(x, y scopeKey) int {
		if c := cmp.Compare(x.pid, y.pid); c != 0 {
			return c
		}
		return cmp.Compare(x.device, y.device)
	})
}

// regions lists a scope's regions depth first: those the region filter
// selects.
func (a *Aggregator) regions(s *scopeAcc, dirs map[string]string, taken map[string]bool) []facts.Region {
	out := []facts.Region{}
	var walk func(n *node)
	walk = func(n *node) {
		for _, c := range n.children {
			if !a.regionSeen[c.name] {
				a.regionSeen[c.name] = true
				a.regionNames = append(a.regionNames, c.name)
			}
			r := a.region(s, c, dirs, taken) // its directory name is taken, listed or not
			if a.regionFilter.selects(c.name) {
				out = append(out, r)
			}
			walk(c)
		}
	}
	walk(s.root)
	return out
}

func (a *Aggregator) region(s *scopeAcc, n *node, dirs map[string]string, taken map[string]bool) facts.Region {
	dir, ok := dirs[n.key]
	if !ok {
		dir = model.RegionDir(n.name, taken)
		dirs[n.key] = dir
	}
	r := facts.Region{Name: n.name, Depth: n.depth, Dir: dir,
		TotalMS: n.incNS / 1e6, KernelCount: n.incN, ExclusiveMS: n.excNS / 1e6, ExclusiveKernelCount: n.excN,
		Kernels: []facts.RegionKernel{}, Metrics: []facts.RegionMetric{}}
	if n.parent != nil && n.parent.depth > 0 {
		r.Parent = n.parent.name
	}
	r.Levels = slices.Clone(n.levels)
	if s.ns > 0 {
		r.Share = n.incNS / s.ns
	}
	t := n.kernels.Table(n.name)
	r.Table = facts.KernelTable(t)
	for _, k := range t.Top(a.cfg.TopKernels).Kernels {
		r.Kernels = append(r.Kernels, facts.RegionKernel{Name: k.Name, Device: k.Device, TotalMS: k.TotalMS, Calls: k.Calls})
	}
	for i, m := range n.metrics {
		if !m.set {
			continue
		}
		v, agg := m.value()
		sp := a.specs[i]
		src := sp.Raw
		if src == "" || a.preferDetails(i) {
			src = sp.Section + ": " + sp.Details
		}
		r.Metrics = append(r.Metrics, facts.RegionMetric{Group: sp.group, Name: sp.Label, Source: src, Unit: m.unit,
			Aggregation: agg, Value: v, Launches: m.n})
	}
	return r
}

// preferDetails reports whether a spec's values came from details rows.
func (a *Aggregator) preferDetails(i int) bool { return a.fromDetails[i] }

func (a *Aggregator) notes() []string {
	var notes []string
	switch {
	case !a.hasNVTX && a.launches > 0:
		notes = append(notes, "No region profiling took place: the export has no NVTX column (profile with ncu --nvtx, around code that pushes NVTX ranges).")
	case a.inRange == 0 && a.launches > 0:
		notes = append(notes, "No region profiling took place: no launch was inside an NVTX push/pop range.")
	}
	if a.rangeN > 0 {
		notes = append(notes, "Each result is a whole NVTX range (range or app-range replay), not a kernel launch: launch counts count ranges, kernel tables name each result by its NVTX path, and a parent counts only the nested ranges that were profiled as results of their own.")
	}
	if a.deeper > 0 {
		notes = append(notes, fmt.Sprintf("%d launches ran in ranges nested deeper than %d levels: each is counted in its level-%d range, and the deeper ranges are not listed.", a.deeper, MaxDepth, MaxDepth))
	}
	if a.startStop {
		notes = append(notes, "The export has start/end NVTX ranges; they are not used: regions follow the push/pop range stack only.")
	}
	if a.filter.active() {
		notes = append(notes, fmt.Sprintf("Kernel filter: %d of %d launches selected; %d (%s ms) left out count for no region.",
			a.selected, a.launches, a.filteredN, strconv.FormatFloat(a.filteredNS/1e6, 'f', 3, 64)))
	}
	notes = append(notes, a.filter.notes()...)
	if a.regionFilter.active() {
		notes = append(notes, "Region filter: only the regions whose names it selects are listed; each listed region's totals, launch counts and share are the same as without it.")
	}
	notes = append(notes, a.regionFilter.notes()...)
	switch {
	case a.launches == 0 || a.inRange == 0 || len(a.specs) == 0:
	case !slices.Contains(a.seen, true):
		notes = append(notes, a.durationsOnlyNote())
	default:
		// A group none of whose metrics the export has is one note
		// (ncu's basic set collects no DRAM bytes nor instruction
		// counts); a group missing some, a note a metric.
		var groups []string
		seen, missing := map[string]bool{}, map[string][]string{}
		for i, sp := range a.specs {
			if !slices.Contains(groups, sp.group) {
				groups = append(groups, sp.group)
			}
			if a.seen[i] {
				seen[sp.group] = true
			} else {
				missing[sp.group] = append(missing[sp.group], fmt.Sprintf("%q", sp.Label))
			}
		}
		for _, g := range groups {
			if !seen[g] {
				notes = append(notes, fmt.Sprintf("Group %q: none of its metrics (%s) is in this export, which its profile did not collect (ncu's basic set has neither DRAM bytes nor instruction counts: ncu=roofline or ncu=full collect them; --metrics without %s leaves the group out).",
					g, strings.Join(missing[g], ", "), g))
				continue
			}
			for i, sp := range a.specs {
				if sp.group == g && !a.seen[i] {
					notes = append(notes, fmt.Sprintf("Metric %q of group %q is in no launch of this export (looked for %s).", sp.Label, sp.group, sp.Source()))
				}
			}
		}
	}
	for _, sp := range a.specs {
		if a.unitClash[sp.Label] {
			notes = append(notes, fmt.Sprintf("Metric %q has values in different units; values not in the first unit were left out.", sp.Label))
		}
	}
	return notes
}

// durationsOnlyNote is the one note for an export that has none of the
// groups' metrics, as a timing pass (--metrics gpu__time_duration.sum)
// writes: what it holds, and which preset measures the rest.
func (a *Aggregator) durationsOnlyNote() string {
	var groups []string
	for _, sp := range a.specs {
		if !slices.Contains(groups, sp.group) {
			groups = append(groups, sp.group)
		}
	}
	return fmt.Sprintf("This export holds kernel durations only, as an ncu timing pass writes: none of the %d metrics of groups %s is in it. A deep pass measures them: %s.",
		len(a.specs), andList(groups), measuredBy(groups))
}

// Launch counts one result of x, as an model.Handler, so that one ncu.Scan
// of an export can feed a region report and other results: Add, with the
// result a whole range when x is a range replay export (IsRangeResult).
func (a *Aggregator) Launch(x *model.Export, l *model.Launch) error {
	if a.export != x {
		a.export, a.rangeReplay = x, RangeReplay(x.Header)
	}
	return a.Add(x.Source, l, IsRangeResult(a.rangeReplay, l))
}

// Finish is the report of everything added (Report), or, when the
// configuration requires every pattern to match (RequireMatches), the
// *UnmatchedError of those that matched nothing.
func (a *Aggregator) Finish(source string) (*facts.RegionReport, error) {
	rep := a.Report(source)
	if a.cfg.RequireMatches {
		if err := a.unmatched(source); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// FromReader aggregates every result of r. The first malformed row ends it
// with a positioned error, as for the kernel table.
func FromReader(r model.Launches, source string, cfg Config) (*facts.RegionReport, error) {
	a, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := r.Feed(source, a)[0]; err != nil {
		return nil, err
	}
	return a.Finish(source)
}
