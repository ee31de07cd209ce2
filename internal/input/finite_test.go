package input

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	MeanMS float64 `json:"mean_ms"`
	hidden float64
}

type Embedded struct {
	Share float64 `json:"share"`
}

type outer struct {
	Embedded
	Rows    []inner            `json:"rows"`
	MFU     *float64           `json:"mfu,omitempty"`
	ByName  map[string]float64 `json:"by_name"`
	Skipped float64            `json:"-"`
	Plain   float32
	Any     any `json:"any"`
}

func TestCheck(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	ok := outer{Rows: []inner{{MeanMS: 1, hidden: nan}}, Skipped: inf, ByName: map[string]float64{"a": 1}}
	require.NoError(t, CheckFinite(ok), "unexported and json:\"-\" fields are not written")
	require.NoError(t, CheckFinite(nil))

	for _, c := range []struct {
		v    outer
		want string
	}{
		{outer{Rows: []inner{{MeanMS: 1}, {MeanMS: inf}}}, "rows[1].mean_ms is +Inf"},
		{outer{MFU: &inf}, "mfu is +Inf"},
		{outer{ByName: map[string]float64{"b": 1, "a": math.Inf(-1)}}, "by_name.a is -Inf"},
		{outer{Embedded: Embedded{Share: nan}}, "share is NaN"},
		{outer{Plain: float32(inf)}, "Plain is +Inf"},
		{outer{Any: []any{1.0, nan}}, "any[1] is NaN"},
	} {
		err := CheckFinite(&c.v)
		require.Error(t, err, c.want)
		assert.Equal(t, c.want, err.Error())
	}
	assert.EqualError(t, CheckFinite(inf), "the value is +Inf")
}
