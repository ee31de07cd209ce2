package harness_test

import (
	"fmt"
	"go/types"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

// facade are the packages a program of another module uses, and what they
// may import of this module: harness, the one door, and facts, the public
// data it hands out.
var facade = map[string][]string{
	"cmd/deepprof": {"harness", "facts"},
	"deepproftest": {"harness", "facts"},
}

// TestFacadeIsTheOneDoor (issue 37): the command and the test API import
// nothing of this module but harness and the public data (facts), in
// every file whatever its build tags and GOOS (tests aside).
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
	graph := map[string][]string{"cmd/deepprof": {"harness", "facts", "internal/rundir"}}
	var bad []string
	for _, imp := range graph["cmd/deepprof"] {
		if !slices.Contains(facade["cmd/deepprof"], imp) {
			bad = append(bad, imp)
		}
	}
	assert.Equal(t, []string{"internal/rundir"}, bad)
}

// TestFacadeTypes (issues 37, 55): harness and deepproftest declare no
// exported alias, and every type an exported identifier of theirs hands
// out (in its signature, its fields, its exported methods, and what those
// types hold in turn) is declared in a package a program of another
// module can import: harness, deepproftest or facts, the public data
// (facts.Summary), never an internal one. So a user's go doc reaches the
// type's own declaration.
func TestFacadeTypes(t *testing.T) {
	t.Parallel()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: ".."}
	pkgs, err := packages.Load(cfg, "./harness", "./deepproftest")
	require.NoError(t, err)
	require.Len(t, pkgs, 2)
	for _, p := range pkgs {
		require.Empty(t, p.Errors)
		assert.Empty(t, aliases(p.Types), "%s: exported aliases: declare the type in package facts or here (issue 55)", p.PkgPath)
		assert.Empty(t, internalTypes(p.Types), "%s: exported identifiers that hand out a type no one outside can name", p.PkgPath)
		if p.PkgPath == module+"/deepproftest" {
			// The walk follows what a type holds: Run's summary, down to
			// the devices of its rows.
			run := handedOut(p.Types)["Run"]
			assert.Contains(t, run, module+"/facts.Summary")
			assert.Contains(t, run, module+"/facts.DeviceID")
		}
	}
}

// aliases are the exported aliases pkg declares.
func aliases(pkg *types.Package) []string {
	var out []string
	for _, name := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
			out = append(out, pkg.Name()+"."+name)
		}
	}
	return out
}

// TestFacadeTypesFindAnInternalType: the checks find an alias, and an
// internal type in a result, behind an alias, in a field and a method's
// result.
func TestFacadeTypesFindAnInternalType(t *testing.T) {
	t.Parallel()
	internal := types.NewPackage(module+"/internal/rundir", "rundir")
	run := types.NewNamed(types.NewTypeName(0, internal, "Run", nil), types.NewStruct(nil, nil), nil)
	pkg := types.NewPackage(module+"/harness", "harness")
	scope := pkg.Scope()
	ptr := types.NewPointer(run)
	results := func(v types.Type) *types.Signature {
		return types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(0, pkg, "", v)), false)
	}
	scope.Insert(types.NewFunc(0, pkg, "Open", results(ptr)))
	scope.Insert(types.NewTypeName(0, pkg, "Alias", run))
	holder := types.NewNamed(types.NewTypeName(0, pkg, "Holder", nil),
		types.NewStruct([]*types.Var{types.NewField(0, pkg, "Run", ptr, false), types.NewField(0, pkg, "hidden", ptr, false)}, nil), nil)
	scope.Insert(holder.Obj())
	public := types.NewPackage(module+"/facts", "facts")
	summary := types.NewNamed(types.NewTypeName(0, public, "Summary", nil), types.NewStruct(nil, nil), nil)
	summary.AddMethod(types.NewFunc(0, public, "Run", types.NewSignatureType(types.NewVar(0, public, "", summary), nil, nil, nil, types.NewTuple(types.NewVar(0, public, "", run)), false)))
	scope.Insert(types.NewFunc(0, pkg, "Read", results(summary)))
	assert.Equal(t, []string{"harness.Alias"}, aliases(pkg))
	assert.ElementsMatch(t, []string{
		"harness.Open: " + module + "/internal/rundir.Run",
		"harness.Alias: " + module + "/internal/rundir.Run",
		"harness.Holder: " + module + "/internal/rundir.Run",
		"harness.Read: " + module + "/internal/rundir.Run",
	}, internalTypes(pkg))
}

// internalTypes names each exported identifier of pkg that hands out a
// type of an internal package, with that type.
func internalTypes(pkg *types.Package) []string {
	var bad []string
	out := handedOut(pkg)
	for _, name := range slices.Sorted(maps.Keys(out)) {
		for _, n := range out[name] {
			if strings.Contains(n, "/internal/") {
				bad = append(bad, fmt.Sprintf("%s.%s: %s", pkg.Name(), name, n))
			}
		}
	}
	return bad
}

// handedOut is, for each exported identifier of pkg, the named types it
// hands out (path.Name), in the order met. The types of this module are
// followed into: what they hold is handed out too; an internal one is not
// followed further.
func handedOut(pkg *types.Package) map[string][]string {
	out := map[string][]string{}
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
				if obj.Pkg() == nil || !strings.HasPrefix(obj.Pkg().Path()+"/", module+"/") {
					for a := range t.TypeArgs().Types() {
						walk(a)
					}
					return
				}
				found = append(found, obj.Pkg().Path()+"."+obj.Name())
				if strings.Contains(obj.Pkg().Path()+"/", "/internal/") {
					return
				}
				for a := range t.TypeArgs().Types() {
					walk(a)
				}
				walk(t.Underlying())
				for m := range t.Methods() {
					if m.Exported() {
						walk(m.Type())
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
		out[name] = found
	}
	return out
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
