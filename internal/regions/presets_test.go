package regions

import (
	"encoding/csv"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// TestPresetsMeasureTheirGroups: each preset's set, recorded on an H200,
// has a raw-page column for every metric of the groups the preset claims,
// and lacks one of every other group; profiles/ncu/NAME.yaml names that set.
func TestPresetsMeasureTheirGroups(t *testing.T) {
	for _, p := range presets {
		t.Run(p.name, func(t *testing.T) {
			f, err := os.Open("../../fixtures/ncu/h200-llama-decode-" + p.set + "/raw.csv")
			require.NoError(t, err)
			defer f.Close()
			r := csv.NewReader(f)
			r.LazyQuotes = true
			header, err := r.Read()
			require.NoError(t, err)
			for _, g := range DefaultGroups() {
				all := true
				for _, m := range g.Metrics {
					all = all && slices.Contains(header, m.Raw)
				}
				assert.Equal(t, slices.Contains(p.groups, g.Name), all, "group %s in the %s set's raw page", g.Name, p.set)
			}

			b, err := os.ReadFile("../../profiles/ncu/" + p.name + ".yaml")
			require.NoError(t, err)
			var prof struct {
				NCU struct{ Set string } `yaml:"ncu"`
			}
			require.NoError(t, yaml.Unmarshal(b, &prof))
			assert.Equal(t, p.set, prof.NCU.Set, "profiles/ncu/%s.yaml", p.name)
		})
	}
}

func TestMeasuredBy(t *testing.T) {
	assert.Equal(t, "duration, sol and occupancy with ncu=default (--set basic); dram and instructions with ncu=full (--set full)",
		measuredBy([]string{"duration", "sol", "occupancy", "dram", "instructions"}))
	assert.Equal(t, "dram with ncu=full (--set full)", measuredBy([]string{"dram"}))
	assert.Equal(t, "sol with ncu=default (--set basic); mine with no preset of deepprof's (add its metrics to ncu.metrics)",
		measuredBy([]string{"sol", "mine"}))
}

// TestDurationsOnlyOneNote: a timing-only export recorded on an H200
// (--metrics gpu__time_duration.sum, with NVTX) gets one note saying so and
// naming the presets, not one note per metric (there were nine).
func TestDurationsOnlyOneNote(t *testing.T) {
	const path = "../../fixtures/ncu/h200-llama-decode-basic/log-file.csv"
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cfg := DefaultConfig()
	rep, err := FromReader(ncu.NewReader(f, path, ncu.Options{Metrics: RawMetrics(cfg.Groups)}), path, cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"This export holds kernel durations only, as an ncu timing pass writes: none of the 9 metrics of groups duration, sol, occupancy, dram and instructions is in it. " +
		"A deep pass measures them: duration, sol and occupancy with ncu=default (--set basic); dram and instructions with ncu=full (--set full)."}, rep.Notes)
}
