package model_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

func TestThresholds(t *testing.T) {
	f, err := model.Tolerances{KernelPct: 2.5}.Thresholds()
	require.NoError(t, err)
	assert.Equal(t, model.Thresholds{Stage: 0.1, Kernel: 0.025, Region: 0.1, MFU: 0.1, Floor: 0.01}, f, "zero takes the default, 10%")
	f, err = model.Tolerances{StagePct: 150, KernelPct: 10, RegionPct: 10, MFUPct: 150}.Thresholds()
	require.NoError(t, err)
	assert.Equal(t, model.Thresholds{Stage: 1.5, Kernel: 0.1, Region: 0.1, MFU: 1.5, Floor: 0.01}, f)

	_, err = model.Tolerances{StagePct: -1}.Thresholds()
	assert.EqualError(t, err, "tolerance stage_pct = -1: want a percentage > 0 (0 takes the default, 10)")
	_, err = model.Tolerances{RegionPct: math.Inf(1), MFUPct: math.NaN()}.Thresholds()
	assert.ErrorContains(t, err, "tolerance region_pct = +Inf")
	assert.ErrorContains(t, err, "tolerance mfu_pct = NaN")
}

// The names a profile gives them, in YAML and JSON.
func TestNames(t *testing.T) {
	var tol model.Tolerances
	require.NoError(t, yaml.Unmarshal([]byte("stage_pct: 15\nkernel_pct: 20\nregion_pct: 25\nmfu_pct: 5\n"), &tol))
	assert.Equal(t, model.Tolerances{StagePct: 15, KernelPct: 20, RegionPct: 25, MFUPct: 5}, tol)
	j, err := json.Marshal(tol)
	require.NoError(t, err)
	assert.JSONEq(t, `{"stage_pct": 15, "kernel_pct": 20, "region_pct": 25, "mfu_pct": 5}`, string(j))
}

// The gate and the floor (issue 51): host gates a wall the host moved; an
// unknown gate and a negative floor are errors naming their key.
func TestGateAndFloor(t *testing.T) {
	f, err := model.Tolerances{Gate: model.GateHost, FloorPct: 2}.Thresholds()
	require.NoError(t, err)
	assert.True(t, f.GateHost)
	assert.Equal(t, 0.02, f.Floor)
	f, err = model.Tolerances{Gate: model.GateGPU}.Thresholds()
	require.NoError(t, err)
	assert.False(t, f.GateHost)
	assert.Equal(t, model.DefaultFloor, f.Floor)
	_, err = model.Tolerances{Gate: "cpu"}.Thresholds()
	assert.ErrorContains(t, err, `gate "cpu"`)
	_, err = model.Tolerances{FloorPct: -1}.Thresholds()
	assert.ErrorContains(t, err, "tolerance floor_pct = -1")
	var tol model.Tolerances
	require.NoError(t, yaml.Unmarshal([]byte("gate: host\nfloor_pct: 0.5\n"), &tol))
	assert.Equal(t, model.Tolerances{Gate: "host", FloorPct: 0.5}, tol)
}
