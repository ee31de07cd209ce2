package nsys_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/nsys"
)

const (
	fixtures = "../../fixtures/"
	golden   = "../../golden/nsys"
)

func newGoldie(t *testing.T) *goldie.Goldie {
	return goldie.New(t, goldie.WithFixtureDir(golden), goldie.WithNameSuffix(""))
}

// argvText is one argument per line: exact, and readable in a diff.
func argvText(args []string) []byte { return []byte(strings.Join(args, "\n") + "\n") }

var program = []string{"python3", "wl.py", "--steps", "4", "name with spaces"}

func TestCaptureArgs(t *testing.T) {
	tests := []struct {
		name string
		c    nsys.Capture
		env  []string
	}{
		{
			name: "whole-run",
			c:    nsys.Capture{Output: "MAIN/nsys/run", Program: program},
		},
		{
			name: "nvtx-default-domain",
			c: nsys.Capture{Output: "MAIN/nsys/run", CaptureRange: "nvtx", NVTXCapture: "decode_all",
				Force: true, Program: program},
			env: []string{"NSYS_NVTX_PROFILER_REGISTER_ONLY=0"},
		},
		{
			name: "nvtx-named-domain",
			c: nsys.Capture{Output: "MAIN/nsys/run", CaptureRange: "nvtx",
				NVTXCapture: "decode_all@LLM", Program: program},
			env: []string{"NSYS_NVTX_PROFILER_REGISTER_ONLY=0"},
		},
		{
			name: "osrt-sampling-extra",
			c: nsys.Capture{Output: "/tmp/r", Trace: []string{"cuda", "nvtx", "osrt"}, SampleCPU: true,
				Extra: []string{"--cuda-graph-trace=node"}, Program: program},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := tt.c.Args()
			require.NoError(t, err)
			assert.Equal(t, "profile", args[0])
			assert.Equal(t, program, args[len(args)-len(program):], "program last, unchanged")
			assert.Equal(t, tt.env, tt.c.Env())
			newGoldie(t).Assert(t, "argv-profile-"+tt.name+".txt", argvText(args))
		})
	}
}

// The recorded RTX 5090 commands (fixtures/nsys/*/cmd.txt), rebuilt: the
// same options and the same program, order of options aside.
func TestCaptureArgsRebuildRecordedCommands(t *testing.T) {
	dirs, err := filepath.Glob(fixtures + "nsys/*/cmd.txt")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, path := range dirs {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			rec := strings.Fields(string(b))
			require.Equal(t, []string{"nsys", "profile"}, rec[:2])
			var c nsys.Capture
			c.SampleCPU = true // the recordings left nsys's sampling on
			opts := rec[2:]
			var want []string
			for i := 0; i < len(opts); i++ {
				o := opts[i]
				switch {
				case strings.HasPrefix(o, "--trace="):
					c.Trace = strings.Split(strings.TrimPrefix(o, "--trace="), ",")
				case o == "--capture-range=nvtx":
					c.CaptureRange = "nvtx"
				case strings.HasPrefix(o, "--nvtx-capture="):
					c.NVTXCapture = strings.TrimPrefix(o, "--nvtx-capture=")
				case o == "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0":
					continue // Env's job here
				case o == "-o":
					c.Output = opts[i+1]
					i++
				case strings.HasPrefix(o, "-"):
					if o != "--capture-range-end=stop" {
						t.Fatalf("option %q not known to this test", o)
					}
				default:
					c.Program = opts[i:]
					i = len(opts)
					continue
				}
				want = append(want, o)
				if o == "-o" {
					want = append(want, c.Output)
				}
			}
			args, err := c.Args()
			require.NoError(t, err)
			got := args[1 : len(args)-len(c.Program)]
			assert.ElementsMatch(t, want, got)
			assert.Equal(t, c.Program, args[len(args)-len(c.Program):])
			if strings.Contains(string(b), "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0") {
				assert.Equal(t, []string{nsys.RegisterOnlyEnv}, c.Env())
			}
		})
	}
}

func TestCaptureArgsErrors(t *testing.T) {
	ok := nsys.Capture{Output: "o", Program: program}
	tests := []struct {
		name string
		edit func(c *nsys.Capture)
		want string
	}{
		{"no output", func(c *nsys.Capture) { c.Output = "" }, "Output is empty"},
		{"no program", func(c *nsys.Capture) { c.Program = nil }, "no program to profile"},
		{"program like an option", func(c *nsys.Capture) { c.Program = []string{"--help"} }, `program "--help" starts with '-'`},
		{"trace with comma", func(c *nsys.Capture) { c.Trace = []string{"cuda,nvtx"} }, `trace "cuda,nvtx"`},
		{"empty trace entry", func(c *nsys.Capture) { c.Trace = []string{"cuda", ""} }, `trace ""`},
		{"unknown capture range", func(c *nsys.Capture) { c.CaptureRange = "cudaProfilerApi" }, `CaptureRange "cudaProfilerApi"`},
		{"nvtx capture without range", func(c *nsys.Capture) { c.NVTXCapture = "decode_all" }, `needs CaptureRange "nvtx"`},
		{"nvtx range without capture", func(c *nsys.Capture) { c.CaptureRange = "nvtx" }, "needs NVTXCapture"},
		{"ncu syntax", func(c *nsys.Capture) { c.CaptureRange, c.NVTXCapture = "nvtx", "LLM@decode_all/" }, "ncu's --nvtx-include syntax"},
		{"no range before @", func(c *nsys.Capture) { c.CaptureRange, c.NVTXCapture = "nvtx", "@LLM" }, "no range name before '@'"},
		{"no domain after @", func(c *nsys.Capture) { c.CaptureRange, c.NVTXCapture = "nvtx", "decode_all@" }, "no domain after '@'"},
		{"nvtx capture tracing neither", func(c *nsys.Capture) {
			c.CaptureRange, c.NVTXCapture, c.Trace = "nvtx", "decode_all", []string{"osrt"}
		}, "needs cuda or nvtx in Trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			args, err := c.Args()
			require.Error(t, err)
			assert.Nil(t, args)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestStatsAndExportArgs(t *testing.T) {
	g := newGoldie(t)
	g.Assert(t, "argv-stats-default.txt", argvText(nsys.StatsArgs("MAIN/nsys/run.nsys-rep", nil, "MAIN/nsys/stats")))
	g.Assert(t, "argv-stats-kern-only-stdout.txt", argvText(nsys.StatsArgs("run.qdrep", []string{model.NsysReportKernSum}, "")))
	g.Assert(t, "argv-export-sqlite.txt", argvText(nsys.ExportSQLiteArgs("MAIN/nsys/run.nsys-rep", "MAIN/nsys/run.sqlite")))
	assert.Equal(t, "MAIN/nsys/stats_cuda_gpu_kern_sum.csv", model.NsysStatsCSVPath("MAIN/nsys/stats", model.NsysReportKernSum))
	assert.Equal(t, []string{"cuda_gpu_kern_sum", "nvtx_sum"}, nsys.DefaultReports, "defaults are part of the argv goldens")
}

func TestResolveReport(t *testing.T) {
	tests := []struct {
		name  string
		files []string // created in the temp dir
		base  string
		want  string // file name found, "" for an error
		err   []string
	}{
		{name: "new format", files: []string{"run.nsys-rep"}, base: "run", want: "run.nsys-rep"},
		{name: "old format", files: []string{"run.qdrep"}, base: "run", want: "run.qdrep"},
		{name: "both: newer format wins", files: []string{"run.qdrep", "run.nsys-rep"}, base: "run", want: "run.nsys-rep"},
		{name: "base with extension", files: []string{"run.nsys-rep"}, base: "run.nsys-rep", want: "run.nsys-rep"},
		{name: "other base ignored", files: []string{"other.nsys-rep"}, base: "run",
			err: []string{"run.nsys-rep nor", "run.qdrep exists", "did nsys run"}},
		{name: "none", base: "run", err: []string{"neither", "run.nsys-rep", "run.qdrep"}},
		{name: "qdstrm left behind", files: []string{"run.qdstrm"}, base: "run",
			err: []string{"run.qdstrm (5 bytes) does", "importer (QdstrmImporter) failed", "bundled with Nsight Compute"}},
		{name: "empty base", base: "", err: []string{"empty base name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("bytes"), 0o644))
			}
			got, err := nsys.ResolveReport(dir, tt.base)
			if tt.want != "" {
				require.NoError(t, err)
				assert.Equal(t, filepath.Join(dir, tt.want), got)
				return
			}
			require.Error(t, err)
			for _, w := range tt.err {
				assert.Contains(t, err.Error(), w)
			}
			if tt.base != "" {
				assert.True(t, errors.Is(err, nsys.ErrNoReport))
			}
		})
	}
	t.Run("directory in the way", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, "run.nsys-rep"), 0o755))
		_, err := nsys.ResolveReport(dir, "run")
		require.ErrorContains(t, err, "not a regular file")
		_, err = nsys.ResolveReportAs(dir, "nsys", "run")
		require.EqualError(t, err, "nsys report: nsys/run.nsys-rep is not a regular file")
	})
	// The caller's names, and the error's fields: what it says without
	// ErrNoReport's words is Why, not a cut of its message.
	t.Run("named as shown", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "run.qdstrm"), []byte("bytes"), 0o644))
		_, err := nsys.ResolveReportAs(dir, "nsys", "run")
		var nr *nsys.NoReportError
		require.ErrorAs(t, err, &nr)
		assert.Equal(t, nsys.NoReportError{Dir: "nsys", Base: "run", Stream: 5}, *nr)
		assert.True(t, strings.HasPrefix(nr.Why(), "neither nsys/run.nsys-rep nor nsys/run.qdrep exists, but nsys/run.qdstrm (5 bytes) does: "), nr.Why())
		assert.Equal(t, "no nsys report: "+nr.Why(), err.Error())
		assert.NotContains(t, err.Error(), dir)
	})
}
