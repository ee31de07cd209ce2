package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommandIsTheWorkload(t *testing.T) {
	c, err := Load(LoadOptions{Dir: "../../profiles", Command: []string{"python3", "-u", "serve.py", "--port", "1"}, Overrides: []string{"model.dtype=bf16"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"python3", "-u", "serve.py", "--port", "1"}, c.Workload.Command())
	assert.Equal(t, "serve", c.Workload.Name)
	assert.Equal(t, "serve", c.Model.Name)
	assert.Empty(t, c.Model.Options, "the default workload's shapes are dropped")
	assert.Equal(t, "bf16", c.Model.Dtype, "overrides apply after the command")

	_, err = Load(LoadOptions{Dir: "../../profiles", Command: []string{"./bench"}, Overrides: []string{"workload.argv=[x.py]"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the command after -- is the workload")

	assert.Equal(t, "bench", ProgramName([]string{"./build/bench", "-n", "3"}))
	assert.Equal(t, "run", ProgramName([]string{"bash", "scripts/run.sh"}))
}
