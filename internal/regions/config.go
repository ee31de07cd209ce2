package regions

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// DefaultTopKernels is how many kernels each region lists by default.
const DefaultTopKernels = 10

// Config says what a region report holds. Its zero value is not the
// default: start from DefaultConfig.
type Config struct {
	// Include and Exclude are kernel-name regular expressions (Go RE2
	// syntax, unanchored). A launch is selected when Include is empty or
	// one of its patterns matches, and no Exclude pattern matches: exclude
	// wins. Launches left out count for no region, but still count in the
	// scope's profiled time.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// RegionInclude and RegionExclude are regular expressions (as above)
	// matched against a region's name, its stack path as reported
	// ("decode_all/decode_step", "LLM@prefill"). They choose which regions
	// are listed, nothing else: a listed region's totals, launch counts and
	// share are what they are without the filter.
	RegionInclude []string `json:"region_include,omitempty"`
	RegionExclude []string `json:"region_exclude,omitempty"`
	// RequireMatches makes a pattern that matched nothing in the export an
	// error (*UnmatchedError) rather than a note: a filter that selects
	// nothing is a mistake when someone asks for a report of one export,
	// and only worth a note in a session's report of a run.
	RequireMatches bool `json:"-"`
	// Groups are the metric groups summarized per region, in this order.
	Groups []Group `json:"groups"`
	// Aggregate adds the regions summed across every (process, device) scope.
	Aggregate bool `json:"aggregate"`
	// TopKernels is how many kernels each region lists (<= 0: all).
	TopKernels int `json:"top_kernels"`
}

// DefaultConfig is every built-in metric group, the aggregate on, the top 10
// kernels per region and no kernel filter.
func DefaultConfig() Config {
	return Config{Groups: DefaultGroups(), Aggregate: true, TopKernels: DefaultTopKernels}
}

// What a filter's patterns are matched against.
const (
	TargetKernel = "kernel" // kernel names (Config.Include, Exclude)
	TargetRegion = "region" // region names (Config.RegionInclude, RegionExclude)
)

// PatternError is a filter pattern that does not compile.
type PatternError struct {
	Target  string // TargetKernel or TargetRegion
	Flag    string // "include" or "exclude"
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("%s %s pattern %q: %v", e.Target, e.Flag, e.Pattern, e.Err)
}

func (e *PatternError) Unwrap() error { return e.Err }

// FilterMiss is a filter pattern that matched nothing in an export.
type FilterMiss struct {
	Target  string `json:"target"` // TargetKernel or TargetRegion
	Flag    string `json:"flag"`   // "include" or "exclude"
	Pattern string `json:"pattern"`
}

// UnmatchedError is the error of a report whose Config.RequireMatches is
// set and one of whose patterns matched nothing: which, and what the export
// holds instead.
type UnmatchedError struct {
	Source string
	Misses []FilterMiss
	// Regions are the names of the export's regions (every scope, first
	// appearance first); KernelNames counts its distinct kernel names.
	Regions     []string
	KernelNames int
}

func (e *UnmatchedError) Error() string {
	msgs := make([]string, len(e.Misses))
	for i, m := range e.Misses {
		msgs[i] = fmt.Sprintf("%s %s pattern %q %s", m.Target, m.Flag, m.Pattern, e.MatchedNothing(m))
	}
	return e.Source + ": " + strings.Join(msgs, "; ")
}

// maxListedRegions bounds the region names an UnmatchedError lists.
const maxListedRegions = 12

// MatchedNothing says what m matched none of: "matched none of the 34
// kernel names", "matched no region (regions: prefill, decode_all)".
func (e *UnmatchedError) MatchedNothing(m FilterMiss) string {
	if m.Target == TargetKernel {
		return fmt.Sprintf("matched none of the %d kernel names", e.KernelNames)
	}
	if len(e.Regions) == 0 {
		return "matched no region: the export has none"
	}
	names := e.Regions
	more := ""
	if len(names) > maxListedRegions {
		names, more = names[:maxListedRegions], fmt.Sprintf(" and %d more", len(e.Regions)-maxListedRegions)
	}
	shown := make([]string, len(names))
	for i, n := range names {
		shown[i] = input.EscapeName(n) // a program's range names, on a terminal
	}
	return fmt.Sprintf("matched no region (regions: %s%s)", strings.Join(shown, ", "), more)
}

// pattern is one compiled pattern and whether it matched.
type pattern struct {
	flag, text string
	re         *regexp.Regexp
	matched    bool
}

// filter selects names (of kernels, or of regions) by pattern.
type filter struct {
	target           string
	include, exclude []*pattern
	cache            map[string]bool
	// names counts distinct names tried while the cache has room.
	names int
}

// maxFilterCache bounds the per-name cache so memory stays bounded.
const maxFilterCache = 1 << 16

func newFilter(target string, include, exclude []string) (*filter, error) {
	f := &filter{target: target, cache: map[string]bool{}}
	for _, in := range []struct {
		flag string
		pats []string
		dst  *[]*pattern
	}{{"include", include, &f.include}, {"exclude", exclude, &f.exclude}} {
		for _, p := range in.pats {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, &PatternError{Target: target, Flag: in.flag, Pattern: p, Err: err}
			}
			*in.dst = append(*in.dst, &pattern{flag: in.flag, text: p, re: re})
		}
	}
	return f, nil
}

// selects reports whether a kernel name is selected. Every pattern is tried
// once per distinct name, so that each pattern knows whether it matched.
func (f *filter) selects(name string) bool {
	if ok, hit := f.cache[name]; hit {
		return ok
	}
	in := len(f.include) == 0
	for _, p := range f.include {
		if p.re.MatchString(name) {
			p.matched = true
			in = true
		}
	}
	out := false
	for _, p := range f.exclude {
		if p.re.MatchString(name) {
			p.matched = true
			out = true
		}
	}
	ok := in && !out
	if len(f.cache) < maxFilterCache {
		f.cache[name] = ok
		f.names++
	}
	return ok
}

// misses are the patterns that matched no name.
func (f *filter) misses() []FilterMiss {
	var out []FilterMiss
	for _, p := range append(append([]*pattern{}, f.include...), f.exclude...) {
		if !p.matched {
			out = append(out, FilterMiss{Target: f.target, Flag: p.flag, Pattern: p.text})
		}
	}
	return out
}

// notes says which patterns matched no name.
func (f *filter) notes() []string {
	var out []string
	for _, m := range f.misses() {
		if m.Target == TargetRegion {
			out = append(out, fmt.Sprintf("region %s pattern %q matched no region", m.Flag, m.Pattern))
		} else {
			out = append(out, fmt.Sprintf("%s pattern %q matched no kernel name", m.Flag, m.Pattern))
		}
	}
	return out
}

func (f *filter) active() bool { return len(f.include)+len(f.exclude) > 0 }

// GroupNames are the names of groups, comma-separated.
func GroupNames(groups []Group) string {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	return strings.Join(names, ",")
}
