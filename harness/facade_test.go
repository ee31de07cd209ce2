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
// may import of this module: harness, the one door.
var facade = map[string][]string{
	"cmd/deepprof": {"harness"},
	"deepproftest": {"harness"},
}

// TestFacadeIsTheOneDoor (issue 37): the command and the test API import
// nothing of this module but harness, in every file whatever its
// build tags and GOOS (tests aside).
func TestFacadeIsTheOneDoor(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	graph := map[string][]string{"cmd/deepprof": {"harness", "internal/rundir"}}
	var bad []string
	for _, imp := range graph["cmd/deepprof"] {
		if !slices.Contains(facade["cmd/deepprof"], imp) {
			bad = append(bad, imp)
		}
	}
	assert.Equal(t, []string{"internal/rundir"}, bad)
}

// TestFacadeTypes (issue 37): every type an exported identifier of
// harness or deepproftest hands out (in its signature, its fields, its
// exported methods, and what those types hold in turn) can be named by a
// program of another module: a type of an internal package only through
// an alias harness declares (harness.Summary).
func TestFacadeTypes(t *testing.T) {
	t.Parallel()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: ".."}
	pkgs, err := packages.Load(cfg, "./harness", "./deepproftest")
	require.NoError(t, err)
	require.Len(t, pkgs, 2)
	var nameable map[*types.TypeName]bool
	for _, p := range pkgs {
		require.Empty(t, p.Errors)
		if p.PkgPath == module+"/harness" {
			nameable = aliased(p.Types)
		}
	}
	require.NotEmpty(t, nameable)
	for _, p := range pkgs {
		bad := internalTypes(p.Types, nameable)
		assert.Empty(t, bad, "%s: exported identifiers that hand out a type no one outside can name", p.PkgPath)
	}
}

// aliased are the types pkg names with an exported alias.
func aliased(pkg *types.Package) map[*types.TypeName]bool {
	out := map[*types.TypeName]bool{}
	for _, name := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
				out[n.Obj()] = true
			}
		}
	}
	return out
}

// TestFacadeTypesFindAnInternalType: the check finds an internal type
// behind an alias, in a field, a result and a method.
func TestFacadeTypesFindAnInternalType(t *testing.T) {
	t.Parallel()
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
	}, internalTypes(pkg, nil))
	// Named by an alias: only the unnamed field's type is left.
	assert.Empty(t, internalTypes(pkg, map[*types.TypeName]bool{run.Obj(): true}))
}

// internalTypes names each exported identifier of pkg that hands out a type
// of an internal package that nameable does not hold, with that type. The
// types of this module it hands out are followed into.
func internalTypes(pkg *types.Package, nameable map[*types.TypeName]bool) []string {
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
				if obj.Pkg() != nil && strings.Contains(obj.Pkg().Path()+"/", "/internal/") && !nameable[obj] {
					found = append(found, obj.Pkg().Path()+"."+obj.Name())
					return
				}
				for a := range t.TypeArgs().Types() {
					walk(a)
				}
				// What a type of this module holds is handed out too.
				if obj.Pkg() == pkg || obj.Pkg() != nil && strings.HasPrefix(obj.Pkg().Path()+"/", module+"/") {
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
	t.Parallel()
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
	t.Parallel()
	_, err := harness.NewProfile(harness.ProfileOptions{ProfilesDir: "../profiles", Overrides: []string{"ncu.lauch_count=3"}})
	var oe *harness.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, oe.Msg, "ncu.lauch_count")
}
