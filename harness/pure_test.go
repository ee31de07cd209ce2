package harness_test

import (
	"go/types"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

// analyses are the packages of the layers that compute a run's facts
// (layers 4 and 5: phases, kernels, regions, summary, compare, config).
// The renderers import none of them: they render package facts' values.
func analyses() []string { return slices.Concat(layers[4], layers[5]) }

// rendered are the packages whose values the renderers render: the facts,
// and the readers' records (the trace is written from the timeline).
var rendered = []string{"facts", "internal/cupti", "internal/timeline", "internal/workload", "internal/model"}

// formats are the analyses' functions that decide only how a number is
// written, whatever their result.
var formats = []string{"github.com/llm-perf-opt/deepprof/internal/model.Decimals"}

// lookups are the readers' functions that give a record by its index (a
// record that holds no pointer names the others so): they compute nothing.
var lookups = []string{
	"(*github.com/llm-perf-opt/deepprof/internal/timeline.Process).CallOf",
	"(*github.com/llm-perf-opt/deepprof/internal/timeline.Process).Fn",
	"(*github.com/llm-perf-opt/deepprof/internal/timeline.Process).APIOf",
	"(*github.com/llm-perf-opt/deepprof/internal/timeline.Process).RangeOf",
}

// TestRenderComputesNothing (issue 34): package render takes its numbers
// and decisions from the analysis, computed; of the analyses' packages it
// uses types, fields and constants, and only those functions and methods
// that word or name what they are given (every result a string, or a list
// of them), choose a number's format, or look a record up by its index.
// One that gives a number or a bool
// is a fact the analysis must hold instead.
func TestRenderComputesNothing(t *testing.T) {
	t.Parallel()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax, Dir: ".."}
	pkgs, err := packages.Load(cfg, "./internal/render")
	require.NoError(t, err)
	require.Len(t, pkgs, 1)
	p := pkgs[0]
	require.Empty(t, p.Errors)
	var bad []string
	seen := map[string]bool{}
	for id, obj := range p.TypesInfo.Uses {
		f, ok := obj.(*types.Func)
		if !ok || f.Pkg() == nil || f.Pkg() == p.Types {
			continue
		}
		rel := strings.TrimPrefix(f.Pkg().Path(), module+"/")
		if !slices.Contains(rendered, rel) {
			continue
		}
		sig := f.Type().(*types.Signature)
		name := f.FullName()
		if seen[name] {
			continue
		}
		seen[name] = true
		if !wordsOnly(sig) && !slices.Contains(formats, name) && !slices.Contains(lookups, name) {
			bad = append(bad, p.Fset.Position(id.Pos()).String()+": "+name+" "+types.TypeString(sig.Results(), nil))
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad, "render computes with these: the analysis should hold their results")
	assert.NotEmpty(t, seen, "render uses the analyses' wording")
}

// TestRenderImportsNoAnalysis (issue 34): the renderers import no package
// that computes a run's facts, so a table cannot work a number out for
// itself; what they render comes from package facts (and the timeline's
// records, for the trace).
func TestRenderImportsNoAnalysis(t *testing.T) {
	t.Parallel()
	graph := moduleImports(t, "..")
	require.Contains(t, graph, "internal/render")
	var bad []string
	for _, q := range graph["internal/render"] {
		if slices.Contains(analyses(), q) {
			bad = append(bad, q)
		}
	}
	assert.Empty(t, bad, "internal/render imports analyses")
	assert.Contains(t, graph["internal/render"], "facts")
}

// units are the methods of package facts that give a figure it holds in
// base units (a peak's TFLOPS as FLOP/s): a conversion, not a computation.
var units = []string{"(" + module + "/facts.Peak).FLOPS", "(" + module + "/facts.Peak).BytesPerSec"}

// TestFactsComputeNothing (issue 34): package facts holds data. Every
// exported function and method of it words or names what it is given
// (decoding JSON aside) or gives a figure it holds in base units (units);
// one that gives a number or a decision is the analysis's to make, and
// belongs in an analysis package.
func TestFactsComputeNothing(t *testing.T) {
	t.Parallel()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: ".."}
	pkgs, err := packages.Load(cfg, "./facts")
	require.NoError(t, err)
	require.Len(t, pkgs, 1)
	require.Empty(t, pkgs[0].Errors)
	scope := pkgs[0].Types.Scope()
	var bad []string
	check := func(f *types.Func) {
		if !f.Exported() || f.Name() == "UnmarshalJSON" || f.Name() == "MarshalJSON" {
			return
		}
		if sig := f.Type().(*types.Signature); !wordsOnly(sig) && !slices.Contains(units, f.FullName()) {
			bad = append(bad, f.FullName()+" "+types.TypeString(sig.Results(), nil))
		}
	}
	funcs := 0
	for _, name := range scope.Names() {
		switch o := scope.Lookup(name).(type) {
		case *types.Func:
			check(o)
			funcs++
		case *types.TypeName:
			if n, ok := o.Type().(*types.Named); ok {
				for m := range n.Methods() {
					check(m)
					funcs++
				}
			}
		}
	}
	assert.Empty(t, bad, "facts computes with these: they belong to the analysis")
	assert.Greater(t, funcs, 5, "facts words what it holds")
}

// wordsOnly says whether every result of sig is words: a string or a list
// of them (an error alongside is allowed: a writer's).
func wordsOnly(sig *types.Signature) bool {
	r := sig.Results()
	if r.Len() == 0 {
		return false
	}
	words := false
	for v := range r.Variables() {
		t := v.Type().Underlying()
		if sl, ok := t.(*types.Slice); ok {
			t = sl.Elem().Underlying()
		}
		switch t := t.(type) {
		case *types.Basic:
			if t.Kind() != types.String {
				return false
			}
			words = true
		default:
			if v.Type().String() != "error" {
				return false
			}
		}
	}
	return words
}
