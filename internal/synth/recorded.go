package synth

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// Recorded is what a run directory's files say, read with plain
// encoding/json, apart from package compare's reader: what a test expects
// compare.Load, the comparison and its reports to find, so that no number of a
// recorded run is typed into a test and a run can be recorded again without
// editing one.
type Recorded struct {
	RunID   string                 // manifest.json's run_id ("" without one)
	Model   string                 // stage1/report.json's model.name
	Device  string                 // stage1/report.json's device
	Stages  map[string][]float64   // stage1/report.json: each stage's repeats, ms
	Kernels []model.KernelTotals   // kernels.json, as listed
	Regions []compare.RegionTotals // ncu/regions/report.json's aggregate
	// EveryLaunchRegions are summary.json's regions when not sampled.
	EveryLaunchRegions []compare.RegionTotals
	// MFU is summary.json's mfu; nil when the run has no summary.json or
	// no mfu in it.
	MFU *compare.MFU
}

// Read reads the recorded run directory dir. It fails the test when a file
// is missing (but summary.json and manifest.json) or does not parse.
func Read(t testing.TB, dir string) *Recorded {
	t.Helper()
	var r Recorded
	read := func(rel string, v any, optional bool) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if optional && errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			t.Fatalf("difftest: %v", err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("difftest: %s: %v", filepath.Join(dir, rel), err)
		}
	}
	var manifest struct {
		RunID string `json:"run_id"`
	}
	read("manifest.json", &manifest, true)
	r.RunID = manifest.RunID

	var stage1 struct {
		Model struct {
			Name string `json:"name"`
		} `json:"model"`
		Device string `json:"device"`
		Stages map[string]struct {
			MS []float64 `json:"ms"`
		} `json:"stages"`
	}
	read("stage1/report.json", &stage1, false)
	r.Model, r.Device = stage1.Model.Name, stage1.Device
	r.Stages = map[string][]float64{}
	for name, st := range stage1.Stages {
		r.Stages[name] = st.MS
	}

	var kernels struct {
		Kernels []model.KernelTotals `json:"kernels"`
	}
	read("kernels.json", &kernels, false)
	r.Kernels = kernels.Kernels

	var regions struct {
		Aggregate []compare.RegionTotals `json:"aggregate"`
	}
	read("ncu/regions/report.json", &regions, false)
	r.Regions = regions.Aggregate

	var summary struct {
		MFU     *compare.MFU `json:"mfu"`
		Regions struct {
			Sampled bool `json:"sampled"`
			Rows    []struct {
				Name     string  `json:"name"`
				TotalMS  float64 `json:"total_ms"`
				Launches int64   `json:"launches"`
			} `json:"rows"`
		} `json:"regions"`
	}
	read(rundir.SummaryJSON, &summary, true)
	r.MFU = summary.MFU
	// A diff of two such runs compares the summary's regions, which count
	// every launch of the timing pass.
	if !summary.Regions.Sampled && len(summary.Regions.Rows) > 0 {
		r.EveryLaunchRegions = []compare.RegionTotals{}
		for _, g := range summary.Regions.Rows {
			r.EveryLaunchRegions = append(r.EveryLaunchRegions, compare.RegionTotals{Name: g.Name, TotalMS: g.TotalMS, KernelCount: g.Launches})
		}
	}
	return &r
}

// KernelMS is the summed time of every listed kernel.
func (r *Recorded) KernelMS() float64 {
	var sum float64
	for _, k := range r.Kernels {
		sum += k.TotalMS
	}
	return sum
}

// MFUFigure is the run's MFU figure name ("model", "prefill" or "decode"):
// nil when not available.
func (r *Recorded) MFUFigure(name string) *float64 {
	if r.MFU == nil {
		return nil
	}
	switch name {
	case "model":
		return r.MFU.Model
	case "prefill":
		return r.MFU.Prefill
	case "decode":
		return r.MFU.Decode
	}
	return nil
}
