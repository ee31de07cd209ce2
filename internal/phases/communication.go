package phases

import (
	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// collectiveCalls holds each rank's collective kernels' durations, in
// start order, by phase name ("" the whole run).
type collectiveCalls map[string]map[facts.Rank][]int64

func (c collectiveCalls) add(phase string, r facts.Rank, ns int64) {
	m := c[phase]
	if m == nil {
		m = map[facts.Rank][]int64{}
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
		// the functions its kernels ran, each asked once
		ran := make([]bool, len(p.Functions))
		for i := range p.Kernels {
			ran[p.Kernels[i].Fn] = true
		}
		for fn, ok := range ran {
			if !ok {
				continue
			}
			f := p.Functions[fn]
			devices[f.Device] = true
			if collective(f.Name()) {
				return true
			}
		}
	}
	return withKernels > 1 && len(devices) > 1
}

// byFunction is rule asked of the kernels of p once a function
// (KernelExecution.Fn): the kernels of a function share its name.
func byFunction(p *timeline.Process, rule func(string) bool) func(*timeline.KernelExecution) bool {
	const yes, no = 1, 2
	memo := make([]uint8, len(p.Functions))
	return func(k *timeline.KernelExecution) bool {
		if m := memo[k.Fn]; m != 0 {
			return m == yes
		}
		v := rule(p.Functions[k.Fn].Name())
		memo[k.Fn] = no
		if v {
			memo[k.Fn] = yes
		}
		return v
	}
}

// balance compares each phase across the scopes, phases in order of first
// appearance (scope by scope), then the whole run.
func balance(scopes []facts.PhaseScope) []facts.RankBalance {
	var order []string
	byName := map[string]*facts.RankBalance{}
	computes, waits := map[*facts.RankBalance]*facts.Rank{}, map[*facts.RankBalance]*facts.Rank{}
	add := func(sc *facts.PhaseScope, p *facts.Phase) {
		if p.Kernels == 0 || p.Communication == nil {
			return
		}
		b := byName[p.Name]
		if b == nil {
			b = &facts.RankBalance{Phase: p.Name}
			byName[p.Name] = b
			order = append(order, p.Name)
		}
		c := p.Communication
		busy := c.ComputeNS + c.CommunicationNS - c.OverlapNS
		rank := &facts.Rank{ProcessID: sc.ProcessID, Device: sc.Device}
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
	out := make([]facts.RankBalance, 0, len(order))
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
