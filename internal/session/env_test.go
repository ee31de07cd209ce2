package session

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

var t0 = time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC)

// TestAddWorkloadToEnv: the workload's model joins env.json; an env.json
// that is not deepprof's is left alone, and the manifest says so.
func TestAddWorkloadToEnv(t *testing.T) {
	t.Parallel()
	rep := &workload.Report{Model: workload.Model{Name: "m", Arch: "A", Params: 7}, Versions: map[string]string{"torch": "2"}}

	run, err := rundir.Create(t.TempDir(), "ok", t0)
	require.NoError(t, err)
	require.NoError(t, run.Write(rundir.EnvJSON, []byte(`{"host": "h", "tools": {}}`)))
	addWorkloadToEnv(run, rep)
	var env workload.EnvInfo
	b, err := os.ReadFile(run.Path(rundir.EnvJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &env))
	assert.Equal(t, "h", env.Host)
	require.NotNil(t, env.Workload)
	assert.Equal(t, rep.Model, env.Workload.Model)
	assert.Equal(t, rep.Versions, env.Workload.Versions)

	bad, err := rundir.Create(t.TempDir(), "bad", t0)
	require.NoError(t, err)
	require.NoError(t, bad.Write(rundir.EnvJSON, []byte(`{"gpu": "not a provenance"}`)))
	addWorkloadToEnv(bad, rep)
	b, err = os.ReadFile(bad.Path(rundir.EnvJSON))
	require.NoError(t, err)
	assert.Equal(t, `{"gpu": "not a provenance"}`, string(b), "left as it was")
	require.Len(t, bad.Manifest().Notes, 1)
	assert.Contains(t, bad.Manifest().Notes[0], "env.json: the workload's model and versions were not added: ")
}

// TestSessionEnvIsComplete: every variable the session sets for a workload
// is one that workload.env may not set (config.SessionEnv).
func TestSessionEnvIsComplete(t *testing.T) {
	t.Parallel()
	for _, k := range []string{workload.EnvPhase, workload.EnvReport, workload.EnvRepeats, workload.EnvNVTXDomain,
		workload.EnvModel, workload.EnvVisible, workload.EnvOracle, EnvOutDir, EnvCUDAInjection, EnvNVTXInjection} {
		if _, ok := config.SessionEnv[k]; !ok {
			t.Errorf("config.SessionEnv lacks %s", k)
		}
	}
}
