package phases_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// isCommunication is the rule the run directory gives: package kernels'
// "communication" category.
func isCommunication() func(string) bool {
	c := kernels.Default()
	return func(name string) bool { return c.Of(name) == kernels.Communication }
}

const allReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

// rankFile is SYNTHETIC: one rank of a tensor-parallel run, on its own
// device. Thread 1 opens "decode" at 1000 and closes it at 1100, and
// launches a GEMM on stream 7 (compute1) and an all-reduce on stream 20 that
// overlaps its end, then a second GEMM (compute2) on stream 7.
func rankFile(pid, dev int, compute1, comm, compute2 [2]int) string {
	return header(pid) +
		n("push", 1000, 1, "", "decode") + n("pop", 1100, 1, "", "") +
		a(1005, 1, 1) + k(compute1[0], compute1[1], dev, 7, 1, "gemm_kernel") +
		a(1006, 1, 2) + k(comm[0], comm[1], dev, 20, 2, allReduce) +
		a(1007, 1, 3) + k(compute2[0], compute2[1], dev, 7, 3, "gemm_kernel") +
		"E\t0\t0\n"
}

// twoRanks: rank 0 (pid 10, device 0) computes 1010-1050 and 1060-1080,
// all-reduce 1040-1070; rank 1 (pid 11, device 1) computes 1010-1090 (and
// a zero-length kernel at 1090), all-reduce 1085-1095.
func twoRanks() []string {
	return []string{
		rankFile(10, 0, [2]int{1010, 1050}, [2]int{1040, 1070}, [2]int{1060, 1080}),
		rankFile(11, 1, [2]int{1010, 1090}, [2]int{1085, 1095}, [2]int{1090, 1090}),
	}
}

func TestCommunication(t *testing.T) {
	rep := phases.Of(build(t, twoRanks()...), phases.Options{Depth: 1, Communication: isCommunication()})
	require.Len(t, rep.Scopes, 2)
	r0, r1 := rep.Scopes[0], rep.Scopes[1]
	require.Len(t, r0.Phases, 1)
	require.Len(t, r1.Phases, 1)
	d0, d1 := r0.Phases[0], r1.Phases[0]
	assert.Equal(t, "decode", d0.Name)

	// Rank 0, in decode's span 1000..1100: compute is the union of
	// 1010-1050 and 1060-1080 = 40+20 = 60; communication 1040-1070 = 30;
	// both run 1040-1050 and 1060-1070 = 20; communication alone 1050-1060
	// = 10. Busy is 1010-1080 = 70 = 60+30-20.
	assert.Equal(t, int64(70), d0.BusyNS)
	assert.Equal(t, &facts.CommunicationSplit{ComputeNS: 60, CommunicationNS: 30, OverlapNS: 20, ExposedCommunicationNS: 10, Collectives: 1}, d0.Communication)
	// Rank 1: compute 1010-1090 = 80; communication 1085-1095 = 10, of
	// which 1085-1090 = 5 beside compute and 5 exposed; busy 1010-1095.
	assert.Equal(t, int64(85), d1.BusyNS)
	assert.Equal(t, &facts.CommunicationSplit{ComputeNS: 80, CommunicationNS: 10, OverlapNS: 5, ExposedCommunicationNS: 5, Collectives: 1}, d1.Communication)
	// The whole run of each: its span is its kernels' (no range), which
	// holds every kernel, so the same split.
	assert.Equal(t, &facts.CommunicationSplit{ComputeNS: 60, CommunicationNS: 30, OverlapNS: 20, ExposedCommunicationNS: 10, Collectives: 1}, r0.Run.Communication)
	assert.Equal(t, &facts.CommunicationSplit{ComputeNS: 80, CommunicationNS: 10, OverlapNS: 5, ExposedCommunicationNS: 5, Collectives: 1}, r1.Run.Communication)

	// Busy: rank 1 85, rank 0 70: imbalance 85/70. Rank 1 has the least
	// communication (10 against 30): the straggler, rank 0's 30 ns of
	// all-reduce holding its wait for it.
	// Net of waiting: one all-reduce each, 30 and 10 ns: 10.
	imb := 85.0 / 70
	net := int64(10)
	want := facts.RankBalance{Ranks: 2, MaxBusyNS: 85, MinBusyNS: 70, MaxComputeNS: 80, MinComputeNS: 60,
		MaxCommunicationNS: 30, MinCommunicationNS: 10, Imbalance: &imb, Straggler: &facts.Rank{ProcessID: 11, Device: 1},
		StragglerBy: phases.StragglerWaitsLeast, NetCommunicationNS: &net, CollectiveCalls: 1}
	decode, run := want, want
	decode.Phase = "decode"
	assert.Equal(t, []facts.RankBalance{decode, run}, rep.Balance, "decode, then the whole run")

	b, err := json.Marshal(rep.Balance[0])
	require.NoError(t, err)
	assert.JSONEq(t, `{"phase":"decode","ranks":2,"max_busy_ns":85,"min_busy_ns":70,"max_compute_ns":80,"min_compute_ns":60,
		"max_communication_ns":30,"min_communication_ns":10,"imbalance":1.2142857142857142,
		"straggler":{"process_id":11,"device":1},"straggler_by":"least communication","net_communication_ns":10,"collective_calls":1}`, string(b))
}

// TestStraggler: the rank the others wait for is named, whether it is
// slow on the GPU (more compute) or late on the host (the same compute,
// later): the one with the least communication time.
func TestStraggler(t *testing.T) {
	slow := rankFile(20, 0, [2]int{1010, 1060}, [2]int{1060, 1070}, [2]int{1070, 1099})
	fast := rankFile(21, 1, [2]int{1010, 1030}, [2]int{1030, 1070}, [2]int{1070, 1080})
	rep := phases.Of(build(t, slow, fast), phases.Options{Depth: 1, Communication: isCommunication()})
	require.NotEmpty(t, rep.Balance)
	b := rep.Balance[0]
	// pid 20: 50+29 = 79 ns of compute, 10 of all-reduce; pid 21: 20+10 =
	// 30, and 40 ns of all-reduce exposed, waiting for pid 20. Busy 89 and
	// 70.
	assert.Equal(t, &facts.Rank{ProcessID: 20, Device: 0}, b.Straggler)
	assert.Equal(t, phases.StragglerWaitsLeast, b.StragglerBy)
	assert.Equal(t, int64(79), b.MaxComputeNS)
	assert.Equal(t, int64(30), b.MinComputeNS)
	require.NotNil(t, b.Imbalance)
	assert.InDelta(t, 89.0/70, *b.Imbalance, 1e-12)
	assert.Equal(t, int64(40), rep.Scopes[1].Phases[0].Communication.ExposedCommunicationNS)

	// Late on the host: both compute 40 ns, but pid 31 launches its
	// kernels 30 ns later, so pid 30's all-reduce waits 30 ns for it.
	early := rankFile(30, 0, [2]int{1010, 1030}, [2]int{1030, 1070}, [2]int{1070, 1090})
	late := rankFile(31, 1, [2]int{1040, 1060}, [2]int{1060, 1070}, [2]int{1070, 1090})
	rep = phases.Of(build(t, early, late), phases.Options{Depth: 1, Communication: isCommunication()})
	b = rep.Balance[0]
	assert.Equal(t, &facts.Rank{ProcessID: 31, Device: 1}, b.Straggler, "the late rank")
	assert.Equal(t, b.MaxComputeNS, b.MinComputeNS, "the same compute")
	assert.Equal(t, int64(40), b.MaxCommunicationNS)
	assert.Equal(t, int64(10), b.MinCommunicationNS)
	require.NotNil(t, b.NetCommunicationNS)
	assert.Equal(t, int64(10), *b.NetCommunicationNS, "the all-reduce itself: the late rank's 10 ns")

	// A rank with one collective less cannot be paired call by call.
	extra := header(32) + n("push", 1000, 1, "", "decode") + n("pop", 1100, 1, "", "") +
		a(1005, 1, 1) + k(1010, 1030, 1, 7, 1, "gemm_kernel") + "E\t0\t0\n"
	rep = phases.Of(build(t, early, extra), phases.Options{Depth: 1, Communication: isCommunication()})
	assert.Nil(t, rep.Balance[0].NetCommunicationNS)
}

// TestNoCommunication: no communication kernel and no processes on
// several GPUs: no split, no balance, and phases.json as before.
func TestNoCommunication(t *testing.T) {
	rep := phases.Of(build(t, phaseFile()), phases.Options{Depth: 1, Communication: isCommunication()})
	assert.Nil(t, rep.Balance)
	for _, sc := range rep.Scopes {
		assert.Nil(t, sc.Run.Communication)
		for _, p := range sc.Phases {
			assert.Nil(t, p.Communication, p.Name)
		}
	}
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "communication")
	assert.NotContains(t, string(b), "balance")

	// Two processes on one GPU with no collective (a program and its
	// child) are not ranks; one process on two GPUs is not either.
	compute := func(pid int) string {
		return header(pid) + a(1005, 1, 1) + k(1010, 1050, 0, 7, 1, "gemm_kernel") + "E\t0\t0\n"
	}
	rep = phases.Of(build(t, compute(10), compute(11)), phases.Options{Depth: 1, Communication: isCommunication()})
	assert.Nil(t, rep.Balance)
	assert.Nil(t, rep.Scopes[1].Run.Communication)
	require.Len(t, phases.Of(build(t, phaseFile()), phases.Options{Depth: 1}).Scopes, 2, "phaseFile's process uses devices 0 and 1")

	// Without a rule, two ranks on two GPUs are still compared: all compute.
	rep = phases.Of(build(t, twoRanks()...), phases.Options{Depth: 1})
	require.NotNil(t, rep.Scopes[0].Phases[0].Communication)
	assert.Equal(t, &facts.CommunicationSplit{ComputeNS: 70}, rep.Scopes[0].Phases[0].Communication)
}

// TestOneProcessCollective: one process with a communication kernel is
// split, and compared with no one.
func TestOneProcessCollective(t *testing.T) {
	rep := phases.Of(build(t, twoRanks()[0]), phases.Options{Depth: 1, Communication: isCommunication()})
	assert.Equal(t, int64(30), rep.Scopes[0].Phases[0].Communication.CommunicationNS)
	require.Len(t, rep.Balance, 2)
	assert.Equal(t, facts.RankBalance{Phase: "decode", Ranks: 1, MaxBusyNS: 70, MinBusyNS: 70, MaxComputeNS: 60, MinComputeNS: 60,
		MaxCommunicationNS: 30, MinCommunicationNS: 30}, rep.Balance[0])
}
