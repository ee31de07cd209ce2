package harness_test

import (
	"fmt"
	"go/types"
	"slices"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

// facade are the packages a program of another module uses, and what they
// may import of this module: harness, the one door, and facts, the data it
// hands out.
var facade = map[string][]string{
	"cmd/deepprof": {"harness", "facts"},
	"deepproftest": {"harness", "facts"},
}

// TestFacadeIsTheOneDoor (issue 37): the command and the test API import
// nothing of this module but harness and facts, in every file whatever its
// build tags and GOOS (tests aside).
func TestFacadeIsTheOneDoor(t *testing.T) {
	graph := moduleImports(t, "..")
	for pkg, allowed := range facade {
		require.Contains(t, graph, pkg)
		for _, imp := range graph[pkg] {
			assert.Contains(t, allowed, imp, "%s imports %s: it goes through harness (issue 37)", pkg, imp)
		}
	}
}

// TestFacadeRefusesAnInternalImport: the check above fails a command that
// imports an internal package.
func TestFacadeRefusesAnInternalImport(t *testing.T) {
	graph := map[string][]string{"cmd/deepprof": {"harness", "internal/rundir"}}
	var bad []string
	for _, imp := range graph["cmd/deepprof"] {
		if !slices.Contains(facade["cmd/deepprof"], imp) {
			bad = append(bad, imp)
		}
	}
	assert.Equal(t, []string{"internal/rundir"}, bad)
}

// TestFacadeTypes (issue 37): no exported identifier of harness or
// deepproftest uses a type of an internal package (in its signature, its
// fields, or its exported methods, followed through the facade's own
// types), so a program of another module can name everything it is
// handed.
func TestFacadeTypes(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: ".."}
	pkgs, err := packages.Load(cfg, "./harness", "./deepproftest")
	require.NoError(t, err)
	require.Len(t, pkgs, 2)
	for _, p := range pkgs {
		require.Empty(t, p.Errors)
		bad := internalTypes(p.Types)
		assert.Empty(t, bad, "%s: exported identifiers that use internal types", p.PkgPath)
	}
}

// TestFacadeTypesFindAnInternalType: the check finds an internal type
// behind an alias, in a field, a result and a method.
func TestFacadeTypesFindAnInternalType(t *testing.T) {
	internal := types.NewPackage(module+"/internal/rundir", "rundir")
	run := types.NewNamed(types.NewTypeName(0, internal, "Run", nil), types.NewStruct(nil, nil), nil)
	pkg := types.NewPackage(module+"/harness", "harness")
	scope := pkg.Scope()
	ptr := types.NewPointer(run)
	scope.Insert(types.NewFunc(0, pkg, "Open", types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(0, pkg, "", ptr)), false)))
	scope.Insert(types.NewTypeName(0, pkg, "Alias", run))
	holder := types.NewNamed(types.NewTypeName(0, pkg, "Holder", nil),
		types.NewStruct([]*types.Var{types.NewField(0, pkg, "Run", ptr, false), types.NewField(0, pkg, "hidden", ptr, false)}, nil), nil)
	scope.Insert(holder.Obj())
	assert.ElementsMatch(t, []string{
		"harness.Open: " + module + "/internal/rundir.Run",
		"harness.Alias: " + module + "/internal/rundir.Run",
		"harness.Holder: " + module + "/internal/rundir.Run",
	}, internalTypes(pkg))
}

// internalTypes names each exported identifier of pkg that uses a type of
// an internal package, with that type.
func internalTypes(pkg *types.Package) []string {
	var bad []string
	for _, name := range pkg.Scope().Names() {
		o := pkg.Scope().Lookup(name)
		if !o.Exported() {
			continue
		}
		seen := map[types.Type]bool{}
		var found []string
		var walk func(types.Type)
		walk = func(t types.Type) {
			if t == nil || seen[t] {
				return
			}
			seen[t] = true
			switch t := t.(type) {
			case *types.Alias:
				walk(types.Unalias(t))
			case *types.Named:
				obj := t.Obj()
				if obj.Pkg() != nil && strings.Contains(obj.Pkg().Path()+"/", "/internal/") {
					found = append(found, obj.Pkg().Path()+"."+obj.Name())
					return
				}
				for a := range t.TypeArgs().Types() {
					walk(a)
				}
				if obj.Pkg() == pkg {
					walk(t.Underlying())
					for m := range t.Methods() {
						if m.Exported() {
							walk(m.Type())
						}
					}
				}
			case *types.Pointer:
				walk(t.Elem())
			case *types.Slice:
				walk(t.Elem())
			case *types.Array:
				walk(t.Elem())
			case *types.Map:
				walk(t.Key())
				walk(t.Elem())
			case *types.Chan:
				walk(t.Elem())
			case *types.Signature:
				for v := range t.Params().Variables() {
					walk(v.Type())
				}
				for v := range t.Results().Variables() {
					walk(v.Type())
				}
			case *types.Struct:
				for f := range t.Fields() {
					if f.Exported() {
						walk(f.Type())
					}
				}
			case *types.Interface:
				for m := range t.Methods() {
					if m.Exported() {
						walk(m.Type())
					}
				}
			}
		}
		walk(o.Type())
		for _, f := range found {
			bad = append(bad, fmt.Sprintf("%s.%s: %s", pkg.Name(), name, f))
		}
	}
	return bad
}

// TestSessionPreparesItself: a Session's methods prepare it when their
// caller did not (no nil session underneath).
func TestSessionPreparesItself(t *testing.T) {
	s, err := harness.NewProfile(harness.ProfileOptions{ProfilesDir: "../profiles", NoPreflight: true,
		Overrides: []string{"run.id=plan", "ncu.path=/usr/local/cuda/bin/ncu", "run.root=" + t.TempDir()}})
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, s.WritePlan(&b))
	assert.Contains(t, b.String(), "MAIN: ")
	assert.Contains(t, b.String(), "ncu-deep")
	assert.NoError(t, s.Ready())
}

// TestProfileOptionErrors: a key of the command line that does not exist
// is the caller's mistake (an OptionError), said with the key.
func TestProfileOptionErrors(t *testing.T) {
	_, err := harness.NewProfile(harness.ProfileOptions{ProfilesDir: "../profiles", Overrides: []string{"ncu.lauch_count=3"}})
	var oe *harness.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, oe.Msg, "ncu.lauch_count")
}
