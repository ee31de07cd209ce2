package main

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// TestMalformedCorpus (issue 16): a corpus of malformed inputs, generated
// here from recorded files (every input is synthetic: a recorded export or
// run with one thing broken), each run through the real command line. The
// golden file golden/cli/malformed-corpus.txt holds, per case, the exit
// status and the first line of the error: never 0, never a panic, and a
// position where the input has one.
func TestMalformedCorpus(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("deepprof")
	require.NoError(t, err)
	const raw = "../../fixtures/ncu/h200-llama-decode-basic/raw.csv"
	// rawNS is the same recording exported with --print-units base.
	const rawNS = "../../fixtures/ncu/h200-llama-decode-basic/raw-units-base.csv"
	const run = "../../fixtures/runs/tiny-llama"

	type kase struct {
		name string
		// make writes the case's inputs into dir and returns the
		// arguments of deepprof
		make func(t *testing.T, dir string) []string
		exit int
		// check, when set, looks at what the command left in dir
		check func(t *testing.T, dir string)
	}
	// edited writes the export from, edited, into dir and gives the
	// arguments of cmd on it.
	edited := func(cmd, from string, edit func(rows [][]string)) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			rows := readCSV(t, from)
			edit(rows)
			p := filepath.Join(dir, "raw.csv")
			writeCSV(t, p, rows)
			return []string{cmd, p}
		}
	}
	kernels := func(edit func(rows [][]string)) func(t *testing.T, dir string) []string {
		return edited("kernels", raw, edit)
	}
	cell := func(rows [][]string, col string, row int, v string) {
		for i, h := range rows[0] {
			if h == col {
				rows[row][i] = v
				return
			}
		}
		t.Fatalf("no column %q", col)
	}
	const dur = "gpu__time_duration.sum"
	fourHuge := func(r [][]string) {
		require.Equal(t, "ns", r[1][slices.Index(r[0], dur)], "the ns export")
		for i := 2; i < 6; i++ {
			cell(r, dur, i, "1e308")
		}
	}
	cases := []kase{
		{"duration NaN", kernels(func(r [][]string) { cell(r, dur, 2, "nan") }), 1, nil},
		{"duration +Inf", kernels(func(r [][]string) { cell(r, dur, 2, "inf") }), 1, nil},
		{"duration -Inf", kernels(func(r [][]string) { cell(r, dur, 2, "-Inf") }), 1, nil},
		{"duration negative", kernels(func(r [][]string) { cell(r, dur, 2, "-4998.128") }), 1, nil},
		{"duration hex float", kernels(func(r [][]string) { cell(r, dur, 2, "0x1p20") }), 1, nil},
		{"duration past float64 in ns (1e308 us)", kernels(func(r [][]string) {
			for i := 2; i < 6; i++ {
				cell(r, dur, i, "1e308")
			}
		}), 1, nil},
		// The same export written in base units (ns): each 1e308 is in
		// range, their sum is not.
		{"durations summing past float64 (kernels)", edited("kernels", rawNS, fourHuge), 1, nil},
		{"durations summing past float64 (regions)", edited("regions", rawNS, fourHuge), 1, nil},
		{"durations summing past float64 (report)", func(t *testing.T, dir string) []string {
			d := copyRun(t, run, dir)
			rows := readCSV(t, rawNS)
			fourHuge(rows)
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			require.NoError(t, w.WriteAll(rows))
			writeGzip(t, filepath.Join(d, "ncu", "timing-raw.csv.gz"), b.Bytes())
			return []string{"report", d}
		}, 1, nil},
		{"device -1", kernels(func(r [][]string) { cell(r, "Device", 2, "-1") }), 1, nil},
		{"empty kernel name", kernels(func(r [][]string) { cell(r, "Kernel Name", 2, "") }), 1, nil},
		{"row with a missing column", kernels(func(r [][]string) { r[3] = r[3][:len(r[3])-1] }), 1, nil},
		{"gzip cut short", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "raw.csv.gz")
			writeGzip(t, p, must(os.ReadFile(raw)))
			b := must(os.ReadFile(p))
			require.NoError(t, os.WriteFile(p, b[:len(b)/2], 0o644))
			return []string{"kernels", p}
		}, 1, nil},
		{"2 MiB of NUL before any header", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "zeros.csv")
			require.NoError(t, os.WriteFile(p, make([]byte, 2<<20), 0o644))
			return []string{"kernels", p}
		}, 1, nil},
		{"group override is a path", func(t *testing.T, dir string) []string {
			return []string{"profile", "--dry-run", "--no-preflight", "--profiles", profilesDir(t), "ncu=../../../../tmp/x/evil"}
		}, 2, nil}, // a command-line key: a usage error
		{"workload.env sets a session variable", func(t *testing.T, dir string) []string {
			return []string{"profile", "--dry-run", "--no-preflight", "--profiles", profilesDir(t), "+workload.env.DEEPPROF_REPEATS=7"}
		}, 2, nil}, // a command-line key: a usage error
		{"workload.env name not UTF-8", func(t *testing.T, dir string) []string {
			return []string{"profile", "--dry-run", "--no-preflight", "--profiles", profilesDir(t), "+workload.env.\xff=1"}
		}, 2, nil}, // a command-line key: a usage error
		{"workload.repeats unbounded", func(t *testing.T, dir string) []string {
			return []string{"profile", "--dry-run", "--no-preflight", "--profiles", profilesDir(t), "workload.repeats=1000000000"}
		}, 2, nil}, // a command-line key: a usage error
		{"baseline with a stage twice", func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "base.json")
			require.NoError(t, os.WriteFile(p, []byte("{\"format\": \"deepprof-baseline/1\",\n\"stages\": [\n{\"name\": \"decode\", \"n\": 2},\n{\"name\": \"decode\", \"n\": 3}]}\n"), 0o644))
			return []string{"diff", p, p}
		}, 2, nil},
		{"workload report with a negative stage time", func(t *testing.T, dir string) []string {
			d := copyRun(t, run, dir)
			p := filepath.Join(d, "stage1", "report.json")
			b := strings.Replace(string(must(os.ReadFile(p))), `"ms": [`, `"ms": [-1, `, 1)
			require.NoError(t, os.WriteFile(p, []byte(b), 0o644))
			return []string{"report", d}
		}, 1, nil},
		{"manifest cut short", func(t *testing.T, dir string) []string {
			d := copyRun(t, run, dir)
			p := filepath.Join(d, "manifest.json")
			b := must(os.ReadFile(p))
			require.NoError(t, os.WriteFile(p, b[:len(b)/2], 0o644))
			return []string{"report", d}
		}, 1, nil},
		{"export beside its gzipped copy", func(t *testing.T, dir string) []string {
			d := copyRun(t, run, dir)
			require.NoError(t, os.WriteFile(filepath.Join(d, "ncu", "raw.csv"), must(os.ReadFile(raw)), 0o644))
			return []string{"report", d}
		}, 1, nil},
		{"workload.env sets the device", func(t *testing.T, dir string) []string {
			return []string{"profile", "--dry-run", "--no-preflight", "--profiles", profilesDir(t), "+workload.env.CUDA_VISIBLE_DEVICES=1"}
		}, 2, nil}, // a command-line key: a usage error
		{"baseline with a kernel twice", func(t *testing.T, dir string) []string {
			// The recorded run's own baseline, its first kernel row listed
			// again at the end.
			out, err := exec.Command(bin, "baseline", run).Output()
			require.NoError(t, err)
			var b map[string]any
			require.NoError(t, json.Unmarshal(out, &b))
			k := b["kernels"].(map[string]any)
			rows := k["rows"].([]any)
			k["rows"] = append(rows, rows[0])
			p := filepath.Join(dir, "base.json")
			require.NoError(t, os.WriteFile(p, must(json.MarshalIndent(b, "", "  ")), 0o644))
			return []string{"diff", p, run}
		}, 2, nil},
		{"hostile kernel and region names", func(t *testing.T, dir string) []string {
			// The recorded run with one kernel and one NVTX range renamed
			// as a hostile program could name them: URLs, NUL, U+202E.
			d := copyRun(t, run, dir)
			for _, f := range []string{"timing-raw.csv.gz", "raw.csv.gz"} {
				editGzip(t, filepath.Join(d, "ncu", f), func(s string) string {
					s = strings.ReplaceAll(s, hostileKernelWas, hostileKernel)
					return strings.ReplaceAll(s, ":decode_step:", ":"+hostileRange+":")
				})
			}
			return []string{"report", d}
		}, 0, checkHostileNames},
		{"NaN duration through report", func(t *testing.T, dir string) []string {
			d := copyRun(t, run, dir)
			p := filepath.Join(d, "ncu", "timing-raw.csv.gz")
			rows := readCSV(t, p)
			cell(rows, dur, 2, "nan")
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			require.NoError(t, w.WriteAll(rows))
			writeGzip(t, p, b.Bytes())
			return []string{"report", d}
		}, 1, checkNaNReport},
		{"diff of a run rebuilt in part", func(t *testing.T, dir string) []string {
			d := copyRun(t, run, dir)
			p := filepath.Join(d, "ncu", "timing-raw.csv.gz")
			b := must(os.ReadFile(p))
			require.NoError(t, os.WriteFile(p, b[:len(b)/3], 0o644))
			out, err := exec.Command(bin, "report", d).CombinedOutput()
			require.Error(t, err, "%s", out)
			return []string{"diff", run, d}
		}, 2, nil},
	}

	var golden strings.Builder
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := c.make(t, dir)
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if c.exit == 0 {
				first, _, _ = strings.Cut(stdout.String(), "\n")
			}
			assert.Equal(t, c.exit, code, "%s", stderr.String())
			if c.check != nil {
				c.check(t, dir)
			}
			assert.NotContains(t, stderr.String(), "panic", "no panic")
			assert.NotEmpty(t, first, "the error says what")
			first = strings.ReplaceAll(first, dir, "DIR")
			golden.WriteString(c.name + "\n  exit " + itoa(code) + ": " + first + "\n")
		})
	}
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/cli"), goldie.WithNameSuffix(".txt"))
	g.Assert(t, "malformed-corpus", []byte(golden.String()))
}

func readCSV(t *testing.T, p string) [][]string {
	b := must(os.ReadFile(p))
	if strings.HasSuffix(p, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		b, err = io.ReadAll(zr)
		require.NoError(t, err)
	}
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	return rows
}

func writeCSV(t *testing.T, p string, rows [][]string) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	require.NoError(t, w.WriteAll(rows))
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
}

func writeGzip(t *testing.T, p string, data []byte) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
}

func copyRun(t *testing.T, src, dir string) string {
	d := filepath.Join(dir, "run")
	require.NoError(t, os.CopyFS(d, os.DirFS(src)))
	return d
}

func profilesDir(t *testing.T) string {
	p, err := filepath.Abs("../../profiles")
	require.NoError(t, err)
	return p
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func itoa(n int) string { return strconv.Itoa(n) }

// The hostile names (SYNTHETIC): a kernel and an NVTX range of the
// recorded run renamed.
const (
	hostileKernelWas = "void at::vectorized_gather_kernel<16, long>(char *, char *, T2 *, int, long, long, long, long, bool)"
	hostileKernel    = "https://evil.example/ \u202egather\x00 www.evil.example"
	hostileRange     = "step https://evil.example/ www.evil.example \u202e\x00x"
)

// checkHostileNames: the hostile names reach the rebuilt files, and none
// of the Markdown, HTML or SVG files holds a raw NUL or U+202E; rendered
// as GitHub does (GFM, with its autolinker), no Markdown file links to the
// names' URLs, and report.html has no such link either.
func checkHostileNames(t *testing.T, dir string) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	seen := map[string]bool{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		ext := filepath.Ext(p)
		if ext != ".md" && ext != ".html" && ext != ".svg" {
			return nil
		}
		b := must(os.ReadFile(p))
		rel := must(filepath.Rel(dir, p))
		assert.False(t, bytes.ContainsRune(b, '\u202e'), "%s: a raw U+202E", rel)
		assert.False(t, bytes.ContainsRune(b, 0), "%s: a raw NUL", rel)
		html := b
		if ext == ".md" {
			var out bytes.Buffer
			require.NoError(t, md.Convert(b, &out))
			html = out.Bytes()
		}
		for _, link := range []string{`href="https://evil.example`, `href="http://www.evil.example`, `href="www.evil.example`} {
			assert.NotContains(t, string(html), link, "%s: a name became a link", rel)
		}
		for _, name := range []string{"gather", "step https"} {
			if bytes.Contains(b, []byte(name)) {
				seen[name] = true
			}
		}
		return nil
	}))
	assert.True(t, seen["gather"] && seen["step https"], "the renamed kernel and range are in the reports: %v", seen)
}

// checkNaNReport: a rebuild whose kernel export holds NaN leaves no
// summary full of NaN, no summary.json of an earlier rebuild called
// complete, and a run that is not complete.
func checkNaNReport(t *testing.T, dir string) {
	d := filepath.Join(dir, "run")
	for _, f := range []string{"stakeholder_summary.md", "summary.json", "report.html"} {
		if b, err := os.ReadFile(filepath.Join(d, f)); err == nil {
			assert.NotContains(t, string(b), "NaN", f)
		}
	}
	var m struct {
		Status    string
		Artifacts []struct{ Path, Status, Reason string }
	}
	require.NoError(t, json.Unmarshal(must(os.ReadFile(filepath.Join(d, "manifest.json"))), &m))
	assert.Equal(t, "partial", m.Status, "a run rebuilt in part is not complete")
	var s struct {
		Kernels struct{ Missing string }
	}
	if b, err := os.ReadFile(filepath.Join(d, "summary.json")); err == nil {
		require.NoError(t, json.Unmarshal(b, &s))
		assert.Contains(t, s.Kernels.Missing, `"nan" is not a number`, "summary.json is this rebuild's, not the recorded one")
	}
}

// editGzip rewrites the text of the gzipped file p.
func editGzip(t *testing.T, p string, edit func(string) string) {
	zr, err := gzip.NewReader(bytes.NewReader(must(os.ReadFile(p))))
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	out := edit(string(b))
	require.NotEqual(t, string(b), out, "%s: the edit changed nothing", p)
	writeGzip(t, p, []byte(out))
}
