package summary

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/facts"
)

// TestLadderStopsAtBindingFloor: a phase must both read its bytes and do
// its FLOPs, so the ladder stops at the higher floor (SYNTHETIC, after a
// held-out prefill: bandwidth floor 3.127 ms beside a compute floor of
// 7.837 ms, now 26.016 ms); the lower floor is no rung.
func TestLadderStopsAtBindingFloor(t *testing.T) {
	bw, fl := 3.127, 7.837
	w := facts.WhatIfRow{NowMS: 26.016, GPUBusyMS: 12, BandwidthFloorMS: &bw, ComputeFloorMS: &fl}
	w.BindingFloor = bindingFloor(w)
	assert.Equal(t, facts.FloorCompute, w.BindingFloor)
	rs := rungs(w, "CUDA graphs")
	if assert.Len(t, rs, 2) {
		assert.Equal(t, facts.FloorBusy, rs[0].Floor)
		assert.Equal(t, facts.FloorCompute, rs[1].Floor)
		assert.InDelta(t, 26.016-7.837, rs[1].SavesMS, 1e-9, "saved down to the binding floor")
	}

	w.ComputeFloorMS = nil
	w.BindingFloor = bindingFloor(w)
	assert.Equal(t, facts.FloorBandwidth, w.BindingFloor, "the only floor known binds")
	w.BandwidthFloorMS = nil
	w.BindingFloor = bindingFloor(w)
	assert.Empty(t, w.BindingFloor)
	assert.Len(t, rungs(w, "CUDA graphs"), 1, "the GPU-busy floor alone")
}
