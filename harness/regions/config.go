package regions

import (
	"fmt"
	"regexp"
	"strings"
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

// PatternError is a kernel-name pattern that does not compile.
type PatternError struct {
	Flag    string // "include" or "exclude"
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("%s pattern %q: %v", e.Flag, e.Pattern, e.Err)
}

func (e *PatternError) Unwrap() error { return e.Err }

// pattern is one compiled kernel-name pattern and whether it matched.
type pattern struct {
	flag, text string
	re         *regexp.Regexp
	matched    bool
}

// filter selects kernels by name.
type filter struct {
	include, exclude []*pattern
	cache            map[string]bool
}

// maxFilterCache bounds the per-name cache so memory stays bounded.
const maxFilterCache = 1 << 16

func newFilter(include, exclude []string) (*filter, error) {
	f := &filter{cache: map[string]bool{}}
	for _, in := range []struct {
		flag string
		pats []string
		dst  *[]*pattern
	}{{"include", include, &f.include}, {"exclude", exclude, &f.exclude}} {
		for _, p := range in.pats {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, &PatternError{Flag: in.flag, Pattern: p, Err: err}
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
	}
	return ok
}

// notes says which patterns matched no kernel name.
func (f *filter) notes() []string {
	var out []string
	for _, p := range append(append([]*pattern{}, f.include...), f.exclude...) {
		if !p.matched {
			out = append(out, fmt.Sprintf("%s pattern %q matched no kernel name", p.flag, p.text))
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
