package model

import (
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		names         Names
		stage, parent string
		want          string
	}{
		{Names{}, "prefill", "", Prefill},
		{Names{}, "decode", "", Decode},
		{Names{}, "decode_all", "", Decode},
		{Names{}, "decode_step", "decode_all", ""}, // a sub-stage has no phase
		{Names{}, "vision_encoder", "", ""},
		{Names{Prefill: []string{"ctx*"}, Decode: []string{"gen"}}, "ctx_encode", "", Prefill},
		{Names{Prefill: []string{"ctx*"}, Decode: []string{"gen"}}, "prefill", "", ""}, // configured names replace the defaults
		{Names{Prefill: []string{"*"}, Decode: []string{"*"}}, "x", "", Prefill},       // prefill's patterns first
	} {
		assert.Equal(t, c.want, c.names.Of(c.stage, c.parent), "%+v %s/%s", c.names, c.parent, c.stage)
	}
}

func TestCheck(t *testing.T) {
	assert.NoError(t, DefaultPhases.Check())
	err := Names{Decode: []string{"decode[", "ok"}}.Check()
	assert.EqualError(t, err, `phases.decode: "decode[": syntax error in pattern (a stage name, or a pattern with * ? [...])`)
	var pe *PatternError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "phases.decode", pe.Key, "the key is a field, for the config's error")
	assert.ErrorIs(t, err, path.ErrBadPattern)
}
