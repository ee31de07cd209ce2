package summary

import (
	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// communication is the section, nil unless the timeline split the phases.
func communication(in Inputs) *facts.Communication {
	rep := in.Phases
	if rep == nil || rep.Balance == nil {
		return nil
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	out := &facts.Communication{Rows: []facts.CommunicationRow{}, Balance: []facts.BalanceRow{}}
	row := func(sc facts.PhaseScope, p facts.Phase) {
		c := p.Communication
		if c == nil {
			return
		}
		r := facts.CommunicationRow{ProcessID: sc.ProcessID, Device: sc.Device, Rank: sc.Rank, Phase: p.Name,
			ComputeMS: ms(c.ComputeNS), CommunicationMS: ms(c.CommunicationNS), OverlapMS: ms(c.OverlapNS),
			ExposedCommunicationMS: ms(c.ExposedCommunicationNS), Collectives: c.Collectives}
		if busy := c.ComputeNS + c.CommunicationNS - c.OverlapNS; busy > 0 {
			r.Share = float64(c.CommunicationNS) / float64(busy)
		}
		out.Rows = append(out.Rows, r)
	}
	for _, sc := range rep.Scopes {
		for _, p := range sc.Phases {
			row(sc, p)
		}
		row(sc, sc.Run)
	}
	for _, b := range rep.Balance {
		out.Balance = append(out.Balance, facts.BalanceRow{Phase: b.Phase, Ranks: b.Ranks,
			MaxBusyMS: ms(b.MaxBusyNS), MinBusyMS: ms(b.MinBusyNS),
			MaxComputeMS: ms(b.MaxComputeNS), MinComputeMS: ms(b.MinComputeNS),
			MaxCommunicationMS: ms(b.MaxCommunicationNS), MinCommunicationMS: ms(b.MinCommunicationNS),
			Imbalance: b.Imbalance, Straggler: b.Straggler, StragglerBy: b.StragglerBy, CollectiveCalls: b.CollectiveCalls})
		rb := &out.Balance[len(out.Balance)-1]
		if b.NetCommunicationNS != nil {
			v := ms(*b.NetCommunicationNS)
			rb.NetCommunicationMS = &v
		}
		rb.ByWait = b.StragglerBy == phases.StragglerWaitsLeast
		if b.Straggler != nil {
			rb.StragglerRank = RankOf(*out, b.Straggler.ProcessID, b.Straggler.Device)
		}
	}
	return out
}

// RankOf is the launcher's rank of a process's device, from the rows; nil
// when unknown.
func RankOf(c facts.Communication, pid int64, dev model.DeviceID) *int {
	for _, r := range c.Rows {
		if r.ProcessID == pid && r.Device == dev {
			return r.Rank
		}
	}
	return nil
}
