package phases

import (
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// CommunicationSplit divides a phase's busy time on one device between
// communication kernels (NCCL collectives and the like:
// Options.Communication) and the others, compute. Each is the union of
// its kernels' intervals inside the phase's spans, whichever phase launched
// them, as BusyNS is, so ComputeNS + CommunicationNS - OverlapNS = BusyNS.
type CommunicationSplit struct {
	// ComputeNS is the time some non-communication kernel runs.
	ComputeNS int64 `json:"compute_ns"`
	// CommunicationNS is the time some communication kernel runs. In a
	// collective every rank waits for the last to join, so a rank's
	// communication time holds its wait for the slower ranks.
	CommunicationNS int64 `json:"communication_ns"`
	// OverlapNS is the time both run at once (a collective on one stream
	// beside compute on another).
	OverlapNS int64 `json:"overlap_ns"`
	// ExposedCommunicationNS is CommunicationNS - OverlapNS: communication
	// with no compute beside it.
	ExposedCommunicationNS int64 `json:"exposed_communication_ns"`
	// Collectives counts the phase's own communication kernels (launched
	// inside it), as Phase.Kernels counts all of them.
	Collectives int64 `json:"collectives"`
}

// RankBalance compares one phase's compute time (CommunicationSplit's
// ComputeNS) across the scopes, one process on one device, that launched
// kernels in it: under torchrun, its ranks.
type RankBalance struct {
	// Phase is the region's path; "" for the whole run.
	Phase string `json:"phase"`
	// Ranks counts the scopes compared.
	Ranks int `json:"ranks"`
	// Busy is the time any kernel runs (compute and communication, each
	// counted once): the imbalance's measure.
	MaxBusyNS int64 `json:"max_busy_ns"`
	MinBusyNS int64 `json:"min_busy_ns"`
	// Compute, and communication, the split of it.
	MaxComputeNS       int64 `json:"max_compute_ns"`
	MinComputeNS       int64 `json:"min_compute_ns"`
	MaxCommunicationNS int64 `json:"max_communication_ns"`
	MinCommunicationNS int64 `json:"min_communication_ns"`
	// Imbalance is MaxBusyNS / MinBusyNS; nil with fewer than two ranks
	// or a rank with no kernel time.
	Imbalance *float64 `json:"imbalance,omitempty"`
	// Straggler is the rank the others wait for, nil with fewer than two
	// ranks: with collectives, the one with the least communication time
	// (a collective's kernel runs until the last rank joins it, so the
	// others' communication time holds their wait for it: a rank late on
	// the host is found as well as one slow on the GPU); without, the one
	// with the most compute. The first in scope order at a tie.
	Straggler *Rank `json:"straggler,omitempty"`
	// StragglerBy says which rule named it: StragglerWaitsLeast or
	// StragglerComputesMost.
	StragglerBy string `json:"straggler_by,omitempty"`
	// NetCommunicationNS is the collectives net of waiting: a collective's
	// kernel runs on every rank until the last one joins it, so the i-th
	// collective of each rank, shortest over the ranks, is the collective
	// itself, the rest on the others their wait; summed over the phase's
	// CollectiveCalls (per rank). Nil with fewer than two ranks, or ranks
	// that made different numbers of collective calls.
	NetCommunicationNS *int64 `json:"net_communication_ns,omitempty"`
	CollectiveCalls    int    `json:"collective_calls,omitempty"`
}

// collectiveCalls holds each rank's collective kernels' durations, in
// start order, by phase name ("" the whole run).
type collectiveCalls map[string]map[Rank][]int64

func (c collectiveCalls) add(phase string, r Rank, ns int64) {
	m := c[phase]
	if m == nil {
		m = map[Rank][]int64{}
		c[phase] = m
	}
	m[r] = append(m[r], ns)
}

// net is a phase's collectives net of waiting (RankBalance) and the calls
// per rank; nil when it cannot be paired call by call.
func (c collectiveCalls) net(phase string) (*int64, int) {
	ranks := c[phase]
	if len(ranks) < 2 {
		return nil, 0
	}
	n := -1
	for _, d := range ranks {
		if n >= 0 && len(d) != n {
			return nil, 0
		}
		n = len(d)
	}
	var sum int64
	for i := range n {
		least := int64(-1)
		for _, d := range ranks {
			if least < 0 || d[i] < least {
				least = d[i]
			}
		}
		sum += least
	}
	return &sum, n
}

// The rules that name a straggler (RankBalance.StragglerBy).
const (
	StragglerWaitsLeast   = "least communication"
	StragglerComputesMost = "most compute"
)

// Rank names a scope: one process on one device.
type Rank struct {
	ProcessID int64          `json:"process_id"`
	Device    model.DeviceID `json:"device"`
}

// communicationRule is rule, remembering each kernel name's answer (the
// rule is a regular expression; a run repeats few names many times); a nil
// rule says no kernel is communication.
func communicationRule(rule func(string) bool) func(string) bool {
	if rule == nil {
		return func(string) bool { return false }
	}
	seen := map[string]bool{}
	return func(name string) bool {
		v, ok := seen[name]
		if !ok {
			v = rule(name)
			seen[name] = v
		}
		return v
	}
}

// splitsCommunication reports whether the phases split busy time between
// communication and compute: the run has a communication kernel, or
// several processes with kernels on more than one device ordinal between
// them (ranks on their GPUs). Processes that share one GPU with no
// collective (a program and the child it starts) are not ranks, nor is
// one process's stray kernel on a second device. Ranks that each see only
// their own GPU (device 0 everywhere, CUDA_VISIBLE_DEVICES per rank) are
// told by their collectives.
func splitsCommunication(tl *timeline.Timeline, collective func(string) bool) bool {
	devices := map[uint32]bool{}
	withKernels := 0
	for _, p := range tl.Processes {
		if len(p.Kernels) > 0 {
			withKernels++
		}
		for i := range p.Kernels {
			k := &p.Kernels[i]
			devices[k.Device] = true
			if collective(k.Name()) {
				return true
			}
		}
	}
	return withKernels > 1 && len(devices) > 1
}

// balance compares each phase across the scopes, phases in order of first
// appearance (scope by scope), then the whole run.
func balance(scopes []PhaseScope) []RankBalance {
	var order []string
	byName := map[string]*RankBalance{}
	computes, waits := map[*RankBalance]*Rank{}, map[*RankBalance]*Rank{}
	add := func(sc *PhaseScope, p *Phase) {
		if p.Kernels == 0 || p.Communication == nil {
			return
		}
		b := byName[p.Name]
		if b == nil {
			b = &RankBalance{Phase: p.Name}
			byName[p.Name] = b
			order = append(order, p.Name)
		}
		c := p.Communication
		busy := c.ComputeNS + c.CommunicationNS - c.OverlapNS
		rank := &Rank{ProcessID: sc.ProcessID, Device: sc.Device}
		b.Ranks++
		first := b.Ranks == 1
		if first || busy > b.MaxBusyNS {
			b.MaxBusyNS = busy
		}
		if first || busy < b.MinBusyNS {
			b.MinBusyNS = busy
		}
		if first || c.ComputeNS > b.MaxComputeNS {
			b.MaxComputeNS = c.ComputeNS
			computes[b] = rank
		}
		if first || c.ComputeNS < b.MinComputeNS {
			b.MinComputeNS = c.ComputeNS
		}
		if first || c.CommunicationNS > b.MaxCommunicationNS {
			b.MaxCommunicationNS = c.CommunicationNS
		}
		if first || c.CommunicationNS < b.MinCommunicationNS {
			b.MinCommunicationNS = c.CommunicationNS
			waits[b] = rank
		}
	}
	for i := range scopes {
		for j := range scopes[i].Phases {
			add(&scopes[i], &scopes[i].Phases[j])
		}
	}
	for i := range scopes { // the whole run, last
		add(&scopes[i], &scopes[i].Run)
	}
	out := make([]RankBalance, 0, len(order))
	for _, name := range order {
		b := byName[name]
		if b.Ranks >= 2 {
			if b.MaxCommunicationNS > 0 {
				b.Straggler, b.StragglerBy = waits[b], StragglerWaitsLeast
			} else {
				b.Straggler, b.StragglerBy = computes[b], StragglerComputesMost
			}
			if b.MinBusyNS > 0 {
				v := float64(b.MaxBusyNS) / float64(b.MinBusyNS)
				b.Imbalance = &v
			}
		}
		out = append(out, *b)
	}
	return out
}
