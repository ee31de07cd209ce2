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

// analyses are the packages that compute a run's facts: what the
// renderers render.
var analyses = []string{"internal/compare", "internal/cupti", "internal/kernels", "internal/regions",
	"internal/summary", "internal/timeline", "internal/workload", "internal/model"}

// formats are the analyses' functions that decide only how a number is
// written, whatever their result.
var formats = []string{"github.com/llm-perf-opt/deepprof/internal/model.Decimals"}

// TestRenderComputesNothing (issue 34): package render takes its numbers
// and decisions from the analysis, computed; of the analyses' packages it
// uses types, fields and constants, and only those functions and methods
// that word or name what they are given (every result a string, or a list
// of them) or choose a number's format. One that gives a number or a bool
// is a fact the analysis must hold instead.
func TestRenderComputesNothing(t *testing.T) {
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
		if !slices.Contains(analyses, rel) {
			continue
		}
		sig := f.Type().(*types.Signature)
		name := f.FullName()
		if seen[name] {
			continue
		}
		seen[name] = true
		if !wordsOnly(sig) && !slices.Contains(formats, name) {
			bad = append(bad, p.Fset.Position(id.Pos()).String()+": "+name+" "+types.TypeString(sig.Results(), nil))
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad, "render computes with these: the analysis should hold their results")
	assert.NotEmpty(t, seen, "render uses the analyses' wording")
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
