package model_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// TestInRanges: a launch is in nvtx.include's ranges when its stack starts
// with one of them, other domains' ranges aside; InRangesOf answers as
// InRanges does, a shared stack's answer found once.
func TestInRanges(t *testing.T) {
	prefill := []model.Range{{Name: "prefill"}}
	decode := []model.Range{{Name: "decode_all"}}
	include := [][]model.Range{prefill, decode}
	stacks := []*model.Stack{
		{Levels: []model.Range{{Name: "prefill"}, {Name: "layer0"}}},
		{Levels: []model.Range{{Domain: "NCCL", Name: "allreduce"}, {Name: "decode_all"}}},
		{Levels: []model.Range{{Name: "warmup"}}},
		{Levels: nil},
		nil,
	}
	want := []bool{true, true, false, false, false}
	for _, filter := range []func(*model.Launch) bool{
		func(l *model.Launch) bool { return model.InRanges(l, include) },
		model.InRangesOf(include),
	} {
		for round := range 2 { // the second asks the same stacks again
			for i, st := range stacks {
				assert.Equal(t, want[i], filter(&model.Launch{NVTX: st}), "stack %d, round %d", i, round)
			}
		}
	}
	every := model.InRangesOf(nil)
	assert.True(t, every(&model.Launch{}), "no range configured: every launch")
}
