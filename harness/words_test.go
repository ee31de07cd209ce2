package harness_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// textFuncs are the functions that read words: a call of one with a
// message as its subject (its first argument) decides by the message's
// words.
var textFuncs = map[string][]string{
	"strings": {"HasPrefix", "HasSuffix", "Contains", "ContainsAny", "ContainsRune", "Index", "LastIndex", "Cut", "CutPrefix",
		"CutSuffix", "TrimPrefix", "TrimSuffix", "EqualFold", "Count", "Split", "SplitN"},
	"bytes": {"HasPrefix", "HasSuffix", "Contains", "Index", "Cut", "CutPrefix", "CutSuffix", "TrimPrefix", "TrimSuffix"},
	"fmt":   {"Sscanf", "Sscan", "Sscanln"},
}

// messageNames are the names of what holds a message of deepprof's own:
// a manifest's reason and notes, an error's message, why a section is
// missing, a source or a label as a sentence says it.
var messageNames = []string{"Reason", "reason", "Msg", "msg", "Message", "message", "Note", "note", "Notes", "notes", "Text",
	"Why", "why", "Missing", "missing", "Source", "Label"}

// wordsAllowed are the functions that read a message's words, each with
// why: another program's words (a library's error that has no type for
// what it says), or deepprof's own older words, read once where an old
// file is opened.
var wordsAllowed = map[string]string{
	"internal/rundir/note.go:upgrade": "a manifest written before partial_by and note_kinds: the words deepprof wrote then stood for those fields",
	"internal/rundir/run.go:RebuildMarked": "cuts the fixed words MarkRebuildPartial put before the reason, once PartialBy (a field) " +
		"has said they are there; nothing is decided on them",
	"internal/rundir/run.go:CheckPresence": "gives an artifact back the reason it had, from the words CheckPresence itself put " +
		"before it (a recorded copy's manifest holds only the words); nothing is decided on them",
	"internal/config/load.go:compose":           "yaml.v3's syntax errors have no type with their line: its message is parsed",
	"internal/workload/facts.go:ReadModelFacts": "encoding/json has no type for an unknown field (golang/go#29035): its message is parsed",
	"cmd/deepprof/main.go:flagError":            "package flag has no type for an unknown flag: its message is parsed",
}

// TestNoBranchOnWords (issue 55): no code decides by the words of
// deepprof's own messages (a manifest's reason or notes, an error's
// message, a label): state is typed, a field, a kind, a sentinel error
// or a constant. It reads every non-test Go file of the module for a
// call of textFuncs, a regexp's Find, Match or ReplaceAll, a switch, an
// == or != against a string literal, or a map's key, whose subject is
// such a message: an Error() call, or a name of messageNames. Those of wordsAllowed are
// allowed, and each must still be there.
func TestNoBranchOnWords(t *testing.T) {
	t.Parallel()
	var found []string
	used := map[string]bool{}
	files := 0
	require.NoError(t, filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "fixtures", "examples", "testdata", "golden", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, "../"))
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, at := range wordsRead(fset, f) {
			key := rel + ":" + at.fn
			if _, ok := wordsAllowed[key]; ok {
				used[key] = true
				continue
			}
			found = append(found, fmt.Sprintf("%s:%d: %s reads %s", rel, at.line, at.fn, at.what))
		}
		return nil
	}))
	assert.Greater(t, files, 100, "the walk finds the module's files")
	assert.Empty(t, found, "code decides by a message's words: give it a field, a kind, a sentinel error or a constant")
	for key := range wordsAllowed {
		assert.True(t, used[key], "%s is allowed to read words and no longer does: take it out of wordsAllowed", key)
	}
}

// TestNoBranchOnWordsFinds: what TestNoBranchOnWords looks for, it finds.
func TestNoBranchOnWordsFinds(t *testing.T) {
	t.Parallel()
	const src = `package p
func a(m M, err error, r R) {
	_ = strings.HasPrefix(m.Reason, "rebuild: ")
	_ = strings.Contains(err.Error(), "not empty")
	msg := err.Error()
	_, _ = strings.CutPrefix(msg, "flag provided")
	_ = r.Label() == "the whole run"
	_ = escapes.MatchString(err.Error())
	switch m.Source { case "ncu": }
	seen[err.Error()] = true
	_ = m.Reason == "" || m.Reason == Const || seen[m.Path] || strings.HasPrefix(m.Path, "ncu/") || strings.Contains(name, "::")
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	require.NoError(t, err)
	var got []string
	for _, at := range wordsRead(fset, f) {
		got = append(got, strconv.Itoa(at.line)+" "+at.what)
	}
	assert.Equal(t, []string{"3 strings.HasPrefix(m.Reason)", "4 strings.Contains(err.Error())", "6 strings.CutPrefix(msg)",
		"7 r.Label() == \"the whole run\"", "8 escapes.MatchString(err.Error())", "9 switch m.Source", "10 a key err.Error()"}, got)
}

// wordRead is one place that reads a message's words.
type wordRead struct {
	fn   string // the function it is in
	line int
	what string
}

// wordsRead are the places of f that read a message's words.
func wordsRead(fset *token.FileSet, f *ast.File) []wordRead {
	var out []wordRead
	for _, decl := range f.Decls {
		fn := "(package)"
		if d, ok := decl.(*ast.FuncDecl); ok {
			fn = d.Name.Name
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			add := func(what string) { out = append(out, wordRead{fn, fset.Position(n.Pos()).Line, what}) }
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || len(n.Args) == 0 || !isMessage(n.Args[0]) {
					return true
				}
				if punctuation(n) {
					return true
				}
				var pkg string
				if id, ok := sel.X.(*ast.Ident); ok {
					pkg = id.Name
				}
				funcs, isPkg := textFuncs[pkg]
				regexp := strings.HasPrefix(sel.Sel.Name, "Find") || strings.HasPrefix(sel.Sel.Name, "Match") || strings.HasPrefix(sel.Sel.Name, "ReplaceAll")
				if isPkg && slices.Contains(funcs, sel.Sel.Name) || !isPkg && regexp {
					add(exprText(sel) + "(" + exprText(n.Args[0]) + ")")
				}
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				for _, s := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
					if lit, ok := s[1].(*ast.BasicLit); ok && lit.Kind == token.STRING && lit.Value != `""` && isMessage(s[0]) {
						add(exprText(s[0]) + " " + n.Op.String() + " " + lit.Value)
					}
				}
			case *ast.IndexExpr:
				if c, ok := n.Index.(*ast.CallExpr); ok && isMessage(c) {
					add("a key " + exprText(c))
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isMessage(n.Tag) {
					add("switch " + exprText(n.Tag))
				}
			}
			return true
		})
	}
	return out
}

// punctuation says whether call trims punctuation off a message (a
// sentence's full stop, before it is written with its own): how it is
// written, not what it says.
func punctuation(call *ast.CallExpr) bool {
	sel := call.Fun.(*ast.SelectorExpr)
	if sel.Sel.Name != "TrimSuffix" && sel.Sel.Name != "TrimPrefix" || len(call.Args) != 2 {
		return false
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	v, err := strconv.Unquote(lit.Value)
	return err == nil && strings.Trim(v, ".,;: ") == ""
}

// isMessage says whether e holds a message: an Error() or Label() call,
// or a name of messageNames.
func isMessage(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return isMessage(e.X)
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && len(e.Args) == 0 && (sel.Sel.Name == "Error" || sel.Sel.Name == "Label")
	case *ast.SelectorExpr:
		return slices.Contains(messageNames, e.Sel.Name)
	case *ast.Ident:
		return slices.Contains(messageNames, e.Name)
	}
	return false
}

// exprText writes an expression for a message, as short as it reads in code.
func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprText(e.Fun) + "()"
	case *ast.ParenExpr:
		return exprText(e.X)
	}
	return "…"
}
