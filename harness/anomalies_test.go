package harness_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// recordedCupti is a recorded CUPTI run (fixtures/README.md).
const recordedCupti = "../fixtures/runs/cupti-tiny-llama"

// smallCupti is a small recorded CUPTI run (a script with NVTX ranges).
const smallCupti = "../fixtures/runs/any-python-script"

// TestRecordingAnomalies: each anomaly of a CUPTI recording that changes
// the run's numbers, made SYNTHETIC from a small recorded run
// (any-python-script) by one edit, is
// named in the summary (its Anomalies section and first finding) and in the
// manifest's notes, and the run is partial; the recorded run itself has
// none and stays complete.
func TestRecordingAnomalies(t *testing.T) {
	clean := rebuilt(t, synth.RawRun(t, smallCupti))
	assert.Equal(t, "complete", clean.manifest.Status)
	assert.NotContains(t, clean.summary, "## Anomalies")

	firstPop := func(lines []string) []string {
		for i, l := range lines {
			if strings.HasPrefix(l, "N\tpop\t") {
				return slices.Delete(lines, i, i+1)
			}
		}
		t.Fatal("no pop in the recording")
		return nil
	}
	for _, c := range []struct {
		edit synth.Edit
		want string // in the summary's Anomalies section and the notes
	}{
		{synth.EditRecords("pop-dropped", firstPop), "never closed"},
		{synth.EditRecords("dropped-records", func(l []string) []string {
			return slices.Insert(l, 1, "X\tdropped_records\t5000")
		}), "the CUPTI library dropped 5000 records"},
		{synth.EditRecords("end-count", func(l []string) []string {
			l[len(l)-1] = "E\t5\t0"
			return l
		}), "the end line counts 5 records"},
		{kernelsTwice(), "kernel records repeat another"},
		{synth.EditRecords("impossible-times", func(l []string) []string {
			for i, x := range l {
				if f := strings.Split(x, "\t"); f[0] == "K" {
					f[1], f[2] = "0", "5000000000000000000"
					l[i] = strings.Join(f, "\t")
					break
				}
			}
			return l
		}), "impossible times"},
		{synth.LinkRecords(), "is a symbolic link"},
		{synth.LinkRecordsDir(), "timeline/cupti is a symbolic link out of the run: not read"},
		// issue 35: a file cut at a line boundary (no end line, the last
		// records gone), a header-only file, an empty one
		{synth.EditRecords("cut-at-line", func(l []string) []string { return l[:len(l)/2] }), "cut short (no E line"},
		{synth.EditRecords("header-only", func(l []string) []string { return l[:1] }), "cut short (no E line"},
		{synth.EmptyRecords(), "no process of the run recorded a kernel"},
		// issue 35: numbers that overflowed or went negative
		{synth.EditRecords("copy-maxint64", func(l []string) []string {
			for i, x := range l {
				if f := strings.Split(x, "\t"); f[0] == "C" {
					f[1], f[2] = "0", "9223372036854775807"
					l[i] = strings.Join(f, "\t")
				}
			}
			return l
		}), "copy records with impossible times"},
		{synth.EditRecords("kernel-before-launch", func(l []string) []string {
			for i, x := range l {
				if f := strings.Split(x, "\t"); f[0] == "K" {
					// 1,000 s earlier, its duration kept: before its launch call
					start, _ := strconv.ParseInt(f[1], 10, 64)
					end, _ := strconv.ParseInt(f[2], 10, 64)
					f[1], f[2] = strconv.FormatInt(start-1e12, 10), strconv.FormatInt(end-1e12, 10)
					l[i] = strings.Join(f, "\t")
					break
				}
			}
			return l
		}), "start before their own launch call"},
		{synth.EditRecords("copy-twice", func(l []string) []string {
			var out []string
			for _, x := range l {
				out = append(out, x)
				if strings.HasPrefix(x, "C\t") {
					out = append(out, x)
				}
			}
			return fixEnd(out)
		}), "copy records repeat another"},
		{synth.EditRecords("dropped-malformed", func(l []string) []string {
			return fixEnd(slices.Insert(l, 1, "X\tdropped_records\tmany"))
		}), `"many" is not a count`},
		{synth.Remove("timeline/cupti/cupti-1234.tsv.gz").As("records-missing"), "the session recorded it (the manifest lists it) and it is not in the run"},
	} {
		t.Run(c.edit.Label, func(t *testing.T) {
			t.Parallel() // each on its own copy
			r := rebuilt(t, synth.RawRun(t, smallCupti, c.edit))
			assert.Equal(t, "partial", r.manifest.Status)
			assert.Contains(t, r.manifest.Reason, "the recording holds")
			assert.Contains(t, r.summary, "## Anomalies")
			assert.Contains(t, r.summary, c.want)
			assert.Contains(t, r.findings, "that change the numbers below")
			assert.True(t, slices.ContainsFunc(r.manifest.Notes, func(n string) bool { return strings.Contains(n, c.want) }), "a note: %v", r.manifest.Notes)
			assert.NotContains(t, r.summary, "kernel ms -", "no negative time")
		})
	}

	// A kernel name whose demangling would pass the demangler's budget is
	// left as recorded, said in a note; the numbers are the same.
	hostile := rebuilt(t, synth.RawRun(t, smallCupti, synth.EditRecords("hostile-name", func(l []string) []string {
		for i, x := range l {
			if f := strings.Split(x, "\t"); f[0] == "K" {
				f[12], f[13] = synth.HostileMangled(20), ""
				l[i] = strings.Join(f, "\t")
				break
			}
		}
		return l
	})))
	assert.Equal(t, "complete", hostile.manifest.Status, "%v", hostile.manifest.Notes)
	assert.True(t, slices.ContainsFunc(hostile.manifest.Notes, func(n string) bool { return strings.Contains(n, "1 kernel name(s) left mangled") }), "%v", hostile.manifest.Notes)

	// A recorded run unpacked (its record files gunzipped) is the same
	// run: complete, the same kernels.
	gunzipped := rebuilt(t, synth.RawRun(t, smallCupti, synth.GunzipRecords()))
	assert.Equal(t, "complete", gunzipped.manifest.Status, "%v", gunzipped.manifest.Notes)
	assert.Equal(t, clean.kernels, gunzipped.kernels)

	// Each launch counted once: the kernel table of the run whose every
	// kernel record is twice is the recorded run's.
	twice := synth.RawRun(t, smallCupti, kernelsTwice())
	rebuilt(t, twice)
	assert.Equal(t, clean.kernels, readFile(t, filepath.Join(twice, rundir.KernelsJSON)))
}

// kernelsTwice records every kernel record twice (the end line counting
// them): one launch recorded twice would count twice.
func kernelsTwice() synth.Edit {
	return synth.EditRecords("kernels-twice", func(l []string) []string {
		var out []string
		for _, x := range l {
			out = append(out, x)
			if strings.HasPrefix(x, "K\t") {
				out = append(out, x)
			}
		}
		return fixEnd(out)
	})
}

// fixEnd makes the end line count the records between it and the header,
// as the library does: an edit that is not about the count keeps it right.
func fixEnd(lines []string) []string {
	lines[len(lines)-1] = fmt.Sprintf("E\t%d\t0", len(lines)-2)
	return lines
}

type rebuiltRun struct {
	manifest struct {
		Status, Reason string
		Notes          []string
	}
	summary, findings, kernels string
}

// rebuilt is the run dir after deepprof report.
func rebuilt(t *testing.T, dir string) rebuiltRun {
	t.Helper()
	_, _ = harness.Report(dir, harness.ReportOptions{})
	var r rebuiltRun
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.ManifestJSON))), &r.manifest))
	r.summary = readFile(t, filepath.Join(dir, rundir.StakeholderSummary))
	if i := strings.Index(r.summary, "## Findings"); i >= 0 {
		r.findings = r.summary[i:]
		if j := strings.Index(r.findings[3:], "## "); j >= 0 {
			r.findings = r.findings[:j+3]
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, rundir.KernelsJSON)); err == nil {
		r.kernels = string(b)
	}
	return r
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestImplausibleMFURefused (issue 27): a workload report claiming 2^62
// generated tokens made "MFU is 1.05e+30%"; an MFU over 100 % of the GPU's
// peak is no MFU: the summary says why it has none.
func TestImplausibleMFURefused(t *testing.T) {
	t.Parallel()
	dir := synth.Run(t, "../fixtures/runs/tiny-llama", synth.EditJSON("tokens-2e62", "stage1/report.json", func(m map[string]any) error {
		m["tokens"].(map[string]any)["generated"] = int64(1) << 62
		return nil
	}))
	r := rebuilt(t, dir)
	var s struct {
		MFU struct {
			Missing string
			Rows    []any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &s))
	assert.Contains(t, s.MFU.Missing, "implausible")
	assert.Contains(t, s.MFU.Missing, "over 100%")
	assert.Empty(t, s.MFU.Rows)
	assert.NotContains(t, r.summary, "e+30%")
}

// TestFallbackSourceNamed (issue 27): a run whose CUPTI records are gone
// falls back to the deep pass's sample for its kernels, and the summary
// says so where it gives the kernel time (it had said "ncu timing pass").
func TestFallbackSourceNamed(t *testing.T) {
	t.Parallel()
	r := rebuilt(t, synth.RawRun(t, recordedCupti, synth.Remove("timeline/cupti/cupti-564.tsv.gz")))
	assert.Contains(t, r.findings, "the deep pass's sample of launches")
	assert.NotContains(t, r.findings, "ncu timing pass")
}

// TestProgramFailureSaidFirst (issue 35): a run whose program failed
// opens its summary with what failed, and that the figures cover only what
// ran before; summary.json says it too.
func TestProgramFailureSaidFirst(t *testing.T) {
	t.Parallel()
	reason := "timeline-cupti: python3 was killed by SIGKILL (sent by the kernel's out-of-memory killer, a scheduler's limit or a timeout: check dmesg and the job's memory limit): iteration 4 of 6"
	dir := synth.Run(t, smallCupti, synth.EditJSON("killed", rundir.ManifestJSON, func(m map[string]any) error {
		m["status"], m["reason"] = "partial", reason
		return nil
	}))
	r := rebuilt(t, dir)
	require.NotEmpty(t, r.findings)
	first := strings.SplitN(strings.TrimPrefix(r.findings, "## Findings\n\n- "), "\n", 2)[0]
	assert.Contains(t, first, "The session did not finish: timeline-cupti: python3 was killed by SIGKILL")
	assert.Contains(t, first, "cover only what the program ran and recorded before that")
	var s struct{ Partial string }
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &s))
	assert.Equal(t, reason, s.Partial)
}

// TestRecordedKilledProgram (issue 35): a program SIGKILLed after 4 of its
// 6 iterations, recorded on an H200 (fixtures/runs/h200-killed-sigkill):
// the CUPTI library's flush kept its records up to the kill, the run is
// partial, and its summary says first what killed it and that the figures
// cover the 4 iterations it recorded.
func TestRecordedKilledProgram(t *testing.T) {
	t.Parallel()
	dir := synth.Run(t, "../fixtures/runs/h200-killed-sigkill")
	r := rebuilt(t, dir)
	assert.Equal(t, "partial", r.manifest.Status)
	first := strings.SplitN(strings.TrimPrefix(r.findings, "## Findings\n\n- "), "\n", 2)[0]
	assert.Contains(t, first, "python3 was killed by SIGKILL (sent by the kernel's out-of-memory killer")
	assert.Contains(t, r.summary, "cupti-503.tsv.gz: cut short (no E line")
	var s facts.Summary
	require.NoError(t, json.Unmarshal([]byte(readFile(t, filepath.Join(dir, rundir.SummaryJSON))), &s))
	for _, st := range s.Stages.Rows {
		if st.Name == "decode_all" {
			assert.Len(t, st.MS, 4, "the 4 iterations run before the kill")
		}
	}
}

// TestNamedPipesRefusedAtOnce (issue 35): a named pipe as manifest.json or
// stage1/report.json hung deepprof report for ever, holding the lock; it
// is refused at once, naming it.
func TestNamedPipesRefusedAtOnce(t *testing.T) {
	for _, rel := range []string{rundir.ManifestJSON, rundir.Stage1Report} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			dir := synth.Run(t, "../fixtures/runs/tiny-llama")
			require.NoError(t, os.Remove(filepath.Join(dir, filepath.FromSlash(rel))))
			input.FIFOForTest(t, filepath.Join(dir, filepath.FromSlash(rel)))
			done := make(chan error, 1)
			go func() { _, err := harness.Report(dir, harness.ReportOptions{}); done <- err }()
			select {
			case err := <-done:
				if rel == rundir.ManifestJSON {
					require.Error(t, err)
					assert.Contains(t, err.Error(), "not a regular file (a named pipe)")
				} else {
					require.Error(t, err, "the workload's report cannot be read: the rebuild says so")
					assert.Contains(t, readFile(t, filepath.Join(dir, rundir.StakeholderSummary)), "not a regular file (a named pipe)")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("deepprof report still waits on the pipe after 10 s")
			}
		})
	}
}

// TestRemovedNoteDescribesOneRebuild (issue 35): "rebuild: removed ...
// made earlier from a source that now fails" stayed in the manifest for
// ever; the next rebuild, its source mended, drops it.
func TestRemovedNoteDescribesOneRebuild(t *testing.T) {
	t.Parallel()
	dir := synth.Run(t, smallCupti)
	rebuilt(t, dir)
	cfg := filepath.Join(dir, rundir.ConfigYAML)
	good, err := os.ReadFile(cfg)
	require.NoError(t, err)
	// A transient failure: kernels.json's source cannot be read.
	records, err := filepath.Glob(filepath.Join(dir, "timeline", "cupti", "cupti-*"))
	require.NoError(t, err)
	require.NotEmpty(t, records)
	saved, err := os.ReadFile(records[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(records[0], []byte("not a record file\n"), 0o644))
	r := rebuilt(t, dir)
	assert.True(t, slices.ContainsFunc(r.manifest.Notes, func(n string) bool { return strings.HasPrefix(n, "rebuild: removed ") }), "%v", r.manifest.Notes)
	require.NoError(t, os.WriteFile(records[0], saved, 0o644))
	require.NoError(t, os.WriteFile(cfg, good, 0o644))
	r = rebuilt(t, dir)
	assert.Equal(t, "complete", r.manifest.Status)
	assert.False(t, slices.ContainsFunc(r.manifest.Notes, func(n string) bool { return strings.HasPrefix(n, "rebuild: removed ") }), "%v", r.manifest.Notes)
}
