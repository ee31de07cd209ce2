package deepprof_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file imports no package of this module: it checks the documented
// commands through the built binary only, so it survives a move of the
// packages.

// docsSkipped are the documented commands that TestDocsCommands does not
// run, each with the reason. The key is the command line as written in a
// ```sh block, without its comment and with runs of spaces made one. The
// test still checks what they name: packages, -run/-fuzz/-bench names,
// scripts and repository paths must exist. An entry that matches no
// documented command fails the test.
var docsSkipped = map[string]string{
	"go test ./...":                    "the command this test is part of",
	"go test -race ./...":              "the whole suite again, under the race detector: minutes",
	".ci/run":                          "CI itself: installs tools and runs every test",
	"go test -run TestDocs -count=1 .": "this test",
	"go install github.com/llm-perf-opt/deepprof/cmd/deepprof@latest": "needs the network and writes into GOPATH/bin",
	"go build -o deepprof ./cmd/deepprof":                             "writes into the checkout; the test builds the CLI the same way into a temporary folder",

	// GPU tests: they need an NVIDIA GPU, Nsight Compute and PyTorch
	// (without them they skip), and compile the module with -tags gpu.
	"go test -tags gpu -run Stage2 ./...":                             "needs a GPU",
	"go test -tags gpu -run Stage2 ./... -update":                     "needs a GPU, and rewrites golden files",
	"go test -tags gpu -run Stage2AnyProgram .":                       "needs a GPU",
	"go test -tags gpu -run 'Stage2MultiGPU|Stage2TwoNodes' .":        "needs 2 GPUs",
	"deepprof merge --out merged NODE0_RUN NODE1_RUN":                 "merges the run directories the two sessions above make on a GPU machine",
	"cd examples/profile-my-script && go test .":                      "compiles a second module: CI (.ci/run) runs it",
	"cd examples/profile-my-script && go test -tags gpu -v . -update": "needs a GPU, and rewrites golden files",
	"cd examples/profile-my-script && go test -tags gpu -v .":         "needs a GPU",

	// Fuzzing runs until stopped, and the long runs take minutes to hours.
	"scripts/fuzz/list.sh":                                                    "lists with git ls-files: needs the checkout's git, not a copy",
	"go test ./internal/ncu -run XXX -fuzz FuzzRawReader":                     "fuzzes until stopped",
	"go test ./internal/ncu -run XXX -fuzz FuzzDetailsReader":                 "fuzzes until stopped",
	"go test ./internal/ncu -run XXX -fuzz FuzzLogFileReader":                 "fuzzes until stopped",
	"go test ./internal/input -run XXX -fuzz FuzzScanner":                     "fuzzes until stopped",
	"go test ./internal/model -run XXX -fuzz FuzzRegionDir":                   "fuzzes until stopped",
	"go test ./internal/cupti -run XXX -fuzz FuzzReader -fuzzminimizetime 2s": "fuzzes until stopped",
	"scripts/fuzz/build.sh /tmp/fuzz-bin":                                     "builds every fuzzer: minutes",
	"scripts/fuzz/run-all.sh /tmp/fuzz-bin 300s /tmp/fuzz-logs":               "runs every fuzzer for 300 s",
	"scripts/fuzz/smoke.sh 3s":                                                "every fuzzer 3 s: minutes (CI runs it)",

	// Benchmarks: seconds to minutes each, on synthetic inputs of hundreds of MB.
	"go test ./internal/kernels -run XXX -bench KernelsRaw":   "a benchmark over a 256 MiB synthetic page",
	"go test ./internal/regions -run XXX -bench RegionsRaw":   "a benchmark over a 64 MiB synthetic page",
	"go test ./internal/cupti -run XXX -bench Reader":         "a benchmark",
	"go test ./internal/timeline -run XXX -bench Attribution": "a benchmark over a million synthetic kernels",
	"go test ./cmd/deepprof -run '^$' -bench MergeRanks":      "a benchmark",
}

// docsRunnable are the programs a documented command may start besides
// deepprof itself: file operations on the block's temporary folder.
var docsRunnable = map[string]bool{"rm": true, "cp": true, "mkdir": true}

// TestDocsCommands runs every command of the ```sh blocks in README.md and
// docs/*.md with the CLI built from this checkout, each block in a
// temporary folder, and checks each inline `deepprof COMMAND --flag` of the
// prose against the binary's help. docs/development.md says how.
func TestDocsCommands(t *testing.T) {
	docs := docFiles(t)
	bin := buildDeepprof(t)
	toolkit := fakeCUDAToolkit(t)

	used := map[string]bool{}
	for _, doc := range docs {
		src, err := os.ReadFile(doc)
		require.NoError(t, err)
		blocks, prose := splitMarkdown(string(src))
		for _, b := range blocks {
			if b.lang != "sh" {
				continue
			}
			name := fmt.Sprintf("%s:%d", filepath.ToSlash(doc), b.line)
			lines, err := parseBlock(b)
			if !assert.NoError(t, err, "%s", name) {
				continue
			}
			for _, dl := range lines {
				if _, ok := docsSkipped[dl.text]; ok {
					used[dl.text] = true
				}
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each block runs in its own folder
				runBlock(t, name, lines, bin, toolkit)
			})
		}
		checkInline(t, doc, prose, bin)
	}
	for cmd := range docsSkipped {
		assert.True(t, used[cmd], "docsSkipped lists %q, which no ```sh block of README.md or docs/*.md holds: remove it, or put the line back", cmd)
	}
}

// docFiles are README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	return append([]string{"README.md"}, docs...)
}

// buildDeepprof builds the CLI once per test run, as the README's go build
// does but without its symbol tables and debug information: it links
// faster.
func buildDeepprof(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deepprof")
	out, err := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./cmd/deepprof").CombinedOutput()
	require.NoError(t, err, "go build ./cmd/deepprof: %s", out)
	return bin
}

// fakeCUDAToolkit is a folder with the files deepprof looks for in a CUDA
// toolkit with CUPTI, and a C compiler that is never run, so that a dry run
// plans the CUPTI timeline (what a multi-GPU session needs) on a machine
// without CUDA. A dry run builds nothing.
func fakeCUDAToolkit(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	files := map[string]string{
		"include/cuda.h":                "",
		"include/nvtx3/nvToolsExt.h":    "",
		"include/cupti.h":               "",
		"include/generated_nvtx_meta.h": "",
		"include/cupti_version.h":       "#define CUPTI_API_VERSION 130000\n",
		"lib64/libcupti.so":             "",
		"version.json":                  `{"cuda": {"version": "13.0.0"}}`,
		"bin/cc-never-run":              "#!/bin/sh\nexit 1\n",
	}
	for rel, body := range files {
		p := filepath.Join(home, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	return []string{"CUDA_HOME=" + home, "CC=" + filepath.Join(home, "bin", "cc-never-run")}
}

// block is a fenced code block of a Markdown file.
type block struct {
	lang  string
	line  int // of its first line of content, 1-based
	lines []string
}

// splitMarkdown returns the fenced code blocks of a Markdown file and its
// prose (every line outside them, fences left out, in order).
func splitMarkdown(src string) (blocks []block, prose string) {
	var cur *block
	var text strings.Builder
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 2}
			text.WriteString("\n")
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
			text.WriteString("\n")
		case cur != nil:
			cur.lines = append(cur.lines, line)
			text.WriteString("\n")
		default:
			text.WriteString(line + "\n")
		}
	}
	return blocks, text.String()
}

// command is one argv of a documented command line, with the environment
// assignments written before it.
type command struct {
	env  []string
	argv []string
}

// docLine is one documented command line: its commands joined by &&.
type docLine struct {
	line   int
	text   string // as written, comment removed, spaces collapsed
	cmds   []command
	status int // the exit status documented for the last command
}

var exitComment = regexp.MustCompile(`^exit (\d+)\b`)

// parseBlock splits a ```sh block into command lines: a line ending in \
// goes on on the next one; blank and comment lines are left out.
func parseBlock(b block) ([]docLine, error) {
	var out []docLine
	for i := 0; i < len(b.lines); i++ {
		start := i
		line := b.lines[i]
		for strings.HasSuffix(line, `\`) && i+1 < len(b.lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + b.lines[i]
		}
		words, comment, err := splitWords(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", b.line+start, err)
		}
		if len(words) == 0 {
			continue
		}
		dl := docLine{line: b.line + start, text: collapse(stripComment(line))}
		if m := exitComment.FindStringSubmatch(strings.TrimSpace(comment)); m != nil {
			dl.status, _ = strconv.Atoi(m[1])
		}
		var cur command
		for _, w := range words {
			if w == andAnd {
				if len(cur.argv) == 0 {
					return nil, fmt.Errorf("line %d: && with no command before it", dl.line)
				}
				dl.cmds = append(dl.cmds, cur)
				cur = command{}
				continue
			}
			if len(cur.argv) == 0 && envAssign.MatchString(w) {
				cur.env = append(cur.env, w)
				continue
			}
			cur.argv = append(cur.argv, w)
		}
		if len(cur.argv) == 0 {
			return nil, fmt.Errorf("line %d: no command after && or the environment", dl.line)
		}
		dl.cmds = append(dl.cmds, cur)
		out = append(out, dl)
	}
	return out, nil
}

var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// andAnd stands for an unquoted && among the words of a line.
const andAnd = "\x00&&"

// splitWords splits a command line into words as a POSIX shell would for
// the little shell syntax documented commands may use: words separated by
// blanks, '...' and "..." quotes, \ escapes, && between commands, and a
// comment from an unquoted # that starts a word. Anything else a shell
// would treat specially (pipes, redirections, ;, $, `, globs, & alone) is
// an error: such a line does not belong in a ```sh block.
func splitWords(line string) (words []string, comment string, err error) {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	r := []rune(line)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			return words, string(r[i+1:]), nil
		case c == '\'':
			j := slices.Index(r[i+1:], '\'')
			if j < 0 {
				return nil, "", errors.New("unclosed '")
			}
			w.WriteString(string(r[i+1 : i+1+j]))
			inWord = true
			i += j + 1
		case c == '"':
			i++
			for ; i < len(r) && r[i] != '"'; i++ {
				switch {
				case r[i] == '\\' && i+1 < len(r) && strings.ContainsRune("\"\\$`", r[i+1]):
					i++
					w.WriteRune(r[i])
				case r[i] == '$' || r[i] == '`':
					return nil, "", fmt.Errorf("%c inside \"...\": a shell would expand it", r[i])
				default:
					w.WriteRune(r[i])
				}
			}
			if i == len(r) {
				return nil, "", errors.New(`unclosed "`)
			}
			inWord = true
		case c == '\\':
			if i+1 < len(r) {
				i++
				w.WriteRune(r[i])
				inWord = true
			}
		case c == '&' && i+1 < len(r) && r[i+1] == '&':
			flush()
			words = append(words, andAnd)
			i++
		case strings.ContainsRune("|;<>$`&()*?~", c) && !(c == '~' && inWord):
			return nil, "", fmt.Errorf("unquoted %q: shell syntax that the documented commands may not use (keep such a line in a ```text block)", c)
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	flush()
	return words, "", nil
}

// stripComment is a line without its comment, for the skip table's keys.
func stripComment(line string) string {
	words, _, err := splitWords(line)
	if err != nil || len(words) == 0 {
		return line
	}
	// The comment starts at the first unquoted " #" past the last word;
	// find it by cutting at each " #" until the words stay the same.
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			head := line[:i]
			if hw, _, err := splitWords(head); err == nil && slices.Equal(hw, words) {
				return head
			}
		}
	}
	return line
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// runBlock runs the command lines of one ```sh block in order, in one
// temporary folder.
func runBlock(t *testing.T, name string, lines []docLine, bin string, toolkit []string) {
	repo, err := os.Getwd()
	require.NoError(t, err)
	sb := newSandbox(t, repo)
	for _, dl := range lines {
		where := fmt.Sprintf("%s (line %d): %s", name, dl.line, dl.text)
		if reason, ok := docsSkipped[dl.text]; ok {
			t.Logf("not run (%s): %s", reason, dl.text)
			checkSkipped(t, where, repo, dl)
			continue
		}
		sb.run(t, where, dl, bin, toolkit)
	}
}

// sandbox is the temporary folder a block's commands run in: a copy of
// profiles/ and scripts/ and of every repository path they name, and the
// folder /tmp paths are mapped into.
type sandbox struct {
	repo, root string
	copied     map[string]bool
}

func newSandbox(t *testing.T, repo string) *sandbox {
	sb := &sandbox{repo: repo, root: t.TempDir(), copied: map[string]bool{}}
	require.NoError(t, os.MkdirAll(filepath.Join(sb.root, "tmp"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(sb.root, "work"), 0o755))
	for _, d := range []string{"profiles", "scripts"} {
		sb.bring(t, d)
	}
	return sb
}

// work is where the checkout's copy lies: the commands' directory.
func (sb *sandbox) work() string { return filepath.Join(sb.root, "work") }

// bring copies the repository path rel (a file or a folder) into the
// sandbox, once; it reports whether rel is a path of the repository.
func (sb *sandbox) bring(t *testing.T, rel string) bool {
	rel = filepath.Clean(rel)
	if rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	src := filepath.Join(sb.repo, rel)
	if _, err := os.Stat(src); err != nil {
		return false
	}
	for p := rel; p != "."; p = filepath.Dir(p) {
		if sb.copied[p] {
			return true
		}
	}
	dst := filepath.Join(sb.work(), rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, copyTree(src, dst))
	sb.copied[rel] = true
	return true
}

// copyTree copies the file or folder src to dst, leaving a file that is
// already there (copied before, as a path named on its own) as it is.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if _, err := os.Lstat(to); err == nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
}

// mapArg rewrites one argument: a /tmp path into the sandbox's tmp, and a
// repository path is copied in (the argument stays relative). The value of
// a --flag=VALUE or key=VALUE argument is mapped the same way.
func (sb *sandbox) mapArg(t *testing.T, arg string) string {
	if k, v, ok := strings.Cut(arg, "="); ok && k != "" {
		return k + "=" + sb.mapArg(t, v)
	}
	if arg == "/tmp" || strings.HasPrefix(arg, "/tmp/") {
		return filepath.Join(sb.root, arg)
	}
	if !strings.HasPrefix(arg, "-") {
		sb.bring(t, arg)
	}
	return arg
}

// inside reports whether path p (absolute, or relative to the work folder)
// lies in the sandbox.
func (sb *sandbox) inside(p string) bool {
	if !filepath.IsAbs(p) {
		p = filepath.Join(sb.work(), p)
	}
	rel, err := filepath.Rel(sb.root, filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// run runs one documented command line and checks its exit status.
func (sb *sandbox) run(t *testing.T, where string, dl docLine, bin string, toolkit []string) {
	t.Helper()
	for i, c := range dl.cmds {
		argv := make([]string, 0, len(c.argv)+2)
		for _, a := range c.argv {
			argv = append(argv, sb.mapArg(t, a))
		}
		switch {
		case argv[0] == "deepprof":
			argv = append([]string{bin}, argv[1:]...)
		case len(argv) >= 3 && argv[0] == "go" && argv[1] == "run" && argv[2] == "./cmd/deepprof":
			argv = append([]string{bin}, argv[3:]...)
		case docsRunnable[argv[0]]:
			for _, a := range argv[1:] {
				if !strings.HasPrefix(a, "-") {
					require.True(t, sb.inside(a), "%s: %s %s: outside the test's folder", where, argv[0], a)
				}
			}
		default:
			assert.Failf(t, "a documented command the test cannot run", "%s: %q is neither deepprof nor one of %v: add the line to docsSkipped in docs_test.go, with the reason", where, argv[0], slices.Sorted(maps.Keys(docsRunnable)))
			return
		}
		if argv[0] == bin && len(argv) > 1 && argv[1] == "profile" {
			argv = dryRun(argv)
		}
		want := 0
		if i == len(dl.cmds)-1 {
			want = dl.status
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = sb.work()
		cmd.Env = append(os.Environ(), toolkit...)
		cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+filepath.Join(sb.root, "cache"))
		cmd.Env = append(cmd.Env, c.env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else {
			require.NoError(t, err, "%s: %q", where, argv)
		}
		if !assert.Equal(t, want, got, "%s: exit status of %q\nstderr:\n%s\nstdout (end):\n%s", where, argv, tail(stderr.String()), tail(stdout.String())) {
			return
		}
	}
}

// dryRun makes a deepprof profile argv plan its session and run nothing:
// --dry-run --no-preflight go right after "profile", unless it already asks
// for a dry run, the configuration or the help.
func dryRun(argv []string) []string {
	end := slices.Index(argv, "--")
	if end < 0 {
		end = len(argv)
	}
	for _, a := range argv[2:end] {
		switch strings.TrimLeft(a, "-") {
		case "dry-run", "print-config", "help", "h":
			return argv
		}
	}
	return slices.Concat(argv[:2], []string{"--dry-run", "--no-preflight"}, argv[2:])
}

func tail(s string) string {
	const n = 2000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// checkSkipped checks what a command that is not run names: the packages
// of a go command, its -run, -fuzz and -bench names, the script it starts,
// the folder it changes to, and every repository path among its arguments.
func checkSkipped(t *testing.T, where, repo string, dl docLine) {
	t.Helper()
	dir := repo
	for _, c := range dl.cmds {
		argv := c.argv
		switch {
		case argv[0] == "cd":
			require.Len(t, argv, 2, "%s: cd takes one folder", where)
			dir = filepath.Join(dir, argv[1])
			assert.DirExists(t, dir, "%s", where)
			continue
		case argv[0] == "go":
			checkGoCommand(t, where, repo, dir, argv)
			continue
		case strings.Contains(argv[0], "/"):
			st, err := os.Stat(filepath.Join(dir, argv[0]))
			if assert.NoError(t, err, "%s: the script it runs", where) {
				assert.NotZero(t, st.Mode().Perm()&0o111, "%s: %s is not executable", where, argv[0])
			}
		}
		for _, a := range argv[1:] {
			checkRepoPath(t, where, dir, a)
		}
	}
}

// checkRepoPath requires a relative argument with a / whose first element
// is in dir to exist there: a fixture, a script or a package.
func checkRepoPath(t *testing.T, where, dir, arg string) {
	if _, v, ok := strings.Cut(arg, "="); ok {
		arg = v
	}
	arg = strings.TrimSuffix(arg, "/...")
	if arg == "" || strings.HasPrefix(arg, "-") || filepath.IsAbs(arg) || !strings.Contains(arg, "/") {
		return
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(arg, "./"), "/")
	if _, err := os.Stat(filepath.Join(dir, first)); err != nil {
		return
	}
	_, err := os.Stat(filepath.Join(dir, arg))
	assert.NoError(t, err, "%s: names %s", where, arg)
}

// goTestFlagsWithValue are the go command's flags, used in the docs, that
// take the next word as their value.
var goTestFlagsWithValue = map[string]bool{
	"run": true, "fuzz": true, "bench": true, "tags": true, "o": true, "count": true,
	"fuzztime": true, "fuzzminimizetime": true, "benchtime": true, "timeout": true,
}

// checkGoCommand checks a go build, install, run or test command: its
// packages exist (module paths resolved against go.mod's), and for go test
// the -run, -fuzz and -bench patterns match functions of their test files.
func checkGoCommand(t *testing.T, where, repo, dir string, argv []string) {
	t.Helper()
	require.GreaterOrEqual(t, len(argv), 2, "%s", where)
	module := modulePath(t, repo)
	flags := map[string]string{}
	var pkgs []string
	for i := 2; i < len(argv); i++ {
		a := argv[i]
		if strings.HasPrefix(a, "-") {
			name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !hasVal && goTestFlagsWithValue[name] && i+1 < len(argv) {
				i++
				val = argv[i]
			}
			flags[name] = val
			continue
		}
		pkgs = append(pkgs, a)
		if argv[1] == "run" {
			break // the rest are the program's arguments
		}
	}
	var dirs []string
	for _, p := range pkgs {
		p, _, _ = strings.Cut(p, "@")
		recursive := strings.HasSuffix(p, "/...")
		p = strings.TrimSuffix(p, "/...")
		switch {
		case p == "." || p == "..." || strings.HasPrefix(p, "./"):
			p = filepath.Join(dir, p)
		case p == module || strings.HasPrefix(p, module+"/"):
			p = filepath.Join(repo, strings.TrimPrefix(p, module))
		default:
			continue // another module's package
		}
		if recursive {
			require.DirExists(t, p, "%s", where)
			require.NoError(t, filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				base := d.Name()
				if d.IsDir() && path != p && (base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
					return filepath.SkipDir
				}
				if d.IsDir() {
					dirs = append(dirs, path)
				}
				return nil
			}))
			continue
		}
		goFiles, _ := filepath.Glob(filepath.Join(p, "*.go"))
		assert.NotEmpty(t, goFiles, "%s: no Go package at %s", where, p)
		dirs = append(dirs, p)
	}
	if argv[1] != "test" {
		return
	}
	names := testFuncNames(t, dirs)
	check := func(flag, prefix string) {
		pat, ok := flags[flag]
		if !ok || pat == "XXX" || pat == "^$" {
			return
		}
		re, err := regexp.Compile(strings.Split(pat, "/")[0])
		require.NoError(t, err, "%s: -%s %s", where, flag, pat)
		found := slices.ContainsFunc(names, func(n string) bool {
			return strings.HasPrefix(n, prefix) && re.MatchString(n)
		})
		assert.True(t, found, "%s: -%s %s matches no %s function in %v", where, flag, pat, prefix, dirs)
	}
	check("fuzz", "Fuzz")
	check("bench", "Benchmark")
	check("run", "")
}

// testFuncNames are the Test, Fuzz, Benchmark and Example functions of the
// _test.go files in dirs, whatever their build tags.
func testFuncNames(t *testing.T, dirs []string) []string {
	re := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)\w*)\(`)
	var names []string
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, m := range re.FindAllSubmatch(b, -1) {
				names = append(names, string(m[1]))
			}
		}
	}
	return names
}

func modulePath(t *testing.T, repo string) string {
	f, err := os.Open(filepath.Join(repo, "go.mod"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(sc.Text(), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	require.FailNow(t, "go.mod has no module line")
	return ""
}

// inlineCode is a `code span` of the prose; it may go on over a line break.
var inlineCode = regexp.MustCompile("`([^`\n]+(?:\n[^`\n]+)?)`")

// checkInline checks each `deepprof COMMAND ...` and `go run ./cmd/deepprof
// COMMAND ...` span of a doc's prose: COMMAND is one of the binary's (an
// upper-case placeholder aside), and every --flag before a -- is one that
// COMMAND --help lists.
func checkInline(t *testing.T, doc, prose, bin string) {
	t.Helper()
	helps := commandHelps(t, bin)
	for _, m := range inlineCode.FindAllStringSubmatchIndex(prose, -1) {
		span := strings.Join(strings.Fields(prose[m[2]:m[3]]), " ")
		rest, ok := strings.CutPrefix(span, "deepprof ")
		if !ok {
			rest, ok = strings.CutPrefix(span, "go run ./cmd/deepprof ")
		}
		if !ok {
			continue
		}
		line := 1 + strings.Count(prose[:m[0]], "\n")
		words := strings.Fields(rest)
		cmd := words[0]
		if strings.ToUpper(cmd) == cmd {
			continue // COMMAND, a placeholder
		}
		help, known := helps[cmd]
		if !assert.True(t, known, "%s:%d: `%s`: deepprof has no command %q", doc, line, span, cmd) {
			continue
		}
		for _, w := range words[1:] {
			w = strings.Trim(w, "[]")
			if w == "--" {
				break
			}
			if !strings.HasPrefix(w, "-") || w == "-" {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if name == "help" || name == "h" {
				continue
			}
			listed := regexp.MustCompile(`(?m)^\s+--` + regexp.QuoteMeta(name) + `\b`).MatchString(help)
			assert.True(t, listed, "%s:%d: `%s`: deepprof %s --help lists no flag -%s", doc, line, span, cmd, name)
		}
	}
}

var helpCache = map[string]map[string]string{}

// commandHelps maps each command of deepprof help to its --help text.
func commandHelps(t *testing.T, bin string) map[string]string {
	if h, ok := helpCache[bin]; ok {
		return h
	}
	out, err := exec.Command(bin, "help").Output()
	require.NoError(t, err)
	helps := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  deepprof (\w+)`).FindAllStringSubmatch(string(out), -1) {
		cmd := m[1]
		if _, ok := helps[cmd]; ok {
			continue
		}
		if cmd == "help" {
			helps[cmd] = ""
			continue
		}
		var b bytes.Buffer
		c := exec.Command(bin, cmd, "--help")
		c.Stdout, c.Stderr = &b, &b
		_ = c.Run() // --help may exit 0 or 2; its text is what counts
		helps[cmd] = b.String()
	}
	require.Contains(t, helps, "kernels", "deepprof help lists no commands:\n%s", out)
	helpCache[bin] = helps
	return helps
}

// TestDocsLinks requires every relative link of README.md and docs/*.md to
// name a file of the repository and, after #, a heading of that file.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, doc := range docFiles(t) {
		src, err := os.ReadFile(doc)
		require.NoError(t, err)
		_, prose := splitMarkdown(string(src))
		for _, m := range link.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
			}
			if !assert.FileExists(t, path, "%s: link %s", doc, target) || anchor == "" {
				continue
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Contains(t, headingSlugs(string(b)), anchor, "%s: link %s: no such heading in %s", doc, target, path)
		}
	}
}

// headingSlugs are the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation dropped, spaces made hyphens.
func headingSlugs(src string) []string {
	_, prose := splitMarkdown(src)
	var slugs []string
	for _, line := range strings.Split(prose, "\n") {
		h, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		h = strings.TrimSpace(strings.TrimLeft(h, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slugs = append(slugs, b.String())
	}
	return slugs
}

// TestReadmeWidth (issue 38): no line of README.md is wider than the 120
// columns the CLI keeps to.
func TestReadmeWidth(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	for i, line := range strings.Split(string(b), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 120, "README.md:%d", i+1)
	}
}
