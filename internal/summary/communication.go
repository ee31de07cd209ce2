package summary

import (
	"fmt"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// Communication is the section "Communication": what the CUPTI timeline
// tells of collectives against compute, per phase and rank (one process on
// one device), and how evenly the ranks compute. The timeline makes it only
// for a run with communication kernels, or several processes with kernels
// on more than one device (timeline.PhaseReport.Balance); the summary has
// none otherwise.
type Communication struct {
	Rows    []CommunicationRow `json:"rows"`
	Balance []RankBalance      `json:"balance"`
}

// CommunicationRow is one phase (or the whole run) on one rank: its busy
// time split between communication kernels and compute
// (timeline.CommunicationSplit), in ms.
type CommunicationRow struct {
	ProcessID int64          `json:"process_id"`
	Device    model.DeviceID `json:"device"`
	Rank      *int           `json:"rank,omitempty"` // as the launcher numbered it; nil when unknown
	// Phase is the NVTX region path; "" for the whole run.
	Phase           string  `json:"phase"`
	ComputeMS       float64 `json:"compute_ms"`
	CommunicationMS float64 `json:"communication_ms"`
	// OverlapMS is the time collectives run beside compute.
	OverlapMS float64 `json:"overlap_ms"`
	// ExposedCommunicationMS is CommunicationMS - OverlapMS.
	ExposedCommunicationMS float64 `json:"exposed_communication_ms"`
	Collectives            int64   `json:"collectives"`
	// Share is CommunicationMS over the busy time (compute and
	// communication, their overlap once); 0 when nothing ran.
	Share float64 `json:"communication_share"`
}

// Label is the row's phase for a sentence or a cell: its region, or "the
// whole run".
func (r CommunicationRow) Label() string {
	if r.Phase == "" {
		return "the whole run"
	}
	return r.Phase
}

// RankBalance is one phase's compute across ranks
// (timeline.RankBalance), in ms.
type RankBalance struct {
	// Phase is the NVTX region path; "" for the whole run.
	Phase              string  `json:"phase"`
	Ranks              int     `json:"ranks"`
	MaxBusyMS          float64 `json:"max_busy_ms"`
	MinBusyMS          float64 `json:"min_busy_ms"`
	MaxComputeMS       float64 `json:"max_compute_ms"`
	MinComputeMS       float64 `json:"min_compute_ms"`
	MaxCommunicationMS float64 `json:"max_communication_ms"`
	MinCommunicationMS float64 `json:"min_communication_ms"`
	// Imbalance is MaxBusyMS / MinBusyMS; nil with fewer than two ranks
	// or one with no kernel time.
	Imbalance *float64 `json:"imbalance,omitempty"`
	// Straggler is the rank the others wait for (timeline.RankBalance);
	// nil with one rank. StraggerBy is the rule that named it.
	Straggler   *phases.Rank `json:"straggler,omitempty"`
	StragglerBy string       `json:"straggler_by,omitempty"`
	// ByWait says the straggler was named by its wait (the least
	// communication time) rather than by its compute; StragglerRank is
	// its launcher's rank, nil when unknown.
	ByWait        bool `json:"straggler_by_wait,omitempty"`
	StragglerRank *int `json:"straggler_rank,omitempty"`
	// NetCommunicationMS is the collectives net of waiting (each call's
	// shortest duration over the ranks, timeline.RankBalance), over
	// CollectiveCalls per rank; nil when the ranks cannot be paired.
	NetCommunicationMS *float64 `json:"net_communication_ms,omitempty"`
	CollectiveCalls    int      `json:"collective_calls,omitempty"`
}

// Label is the balance's phase for a sentence or a cell: its region, or
// "the whole run".
func (b RankBalance) Label() string {
	if b.Phase == "" {
		return "the whole run"
	}
	return b.Phase
}

// communication is the section, nil unless the timeline split the phases.
func communication(in Inputs) *Communication {
	rep := in.Phases
	if rep == nil || rep.Balance == nil {
		return nil
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	out := &Communication{Rows: []CommunicationRow{}, Balance: []RankBalance{}}
	row := func(sc phases.PhaseScope, p phases.Phase) {
		c := p.Communication
		if c == nil {
			return
		}
		r := CommunicationRow{ProcessID: sc.ProcessID, Device: sc.Device, Rank: sc.Rank, Phase: p.Name,
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
		out.Balance = append(out.Balance, RankBalance{Phase: b.Phase, Ranks: b.Ranks,
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
			rb.StragglerRank = out.RankOf(b.Straggler.ProcessID, b.Straggler.Device)
		}
	}
	return out
}

// Whose names a process's device in a run of several: "process P, GPU D",
// or "rank R, process P, GPU D" where the launcher's rank is known.
func Whose(rank *int, pid int64, dev model.DeviceID) string {
	if rank == nil {
		return fmt.Sprintf("process %d, GPU %d", pid, dev)
	}
	return fmt.Sprintf("rank %d, process %d, GPU %d", *rank, pid, dev)
}

// WhoseParen is Whose as the findings write it after a phase: "process P
// (GPU D)", or "rank R (process P, GPU D)".
func WhoseParen(rank *int, pid int64, dev model.DeviceID) string {
	if rank == nil {
		return fmt.Sprintf("process %d (GPU %d)", pid, dev)
	}
	return fmt.Sprintf("rank %d (process %d, GPU %d)", *rank, pid, dev)
}

// RankOf is the launcher's rank of a process's device, from the rows; nil
// when unknown.
func (c Communication) RankOf(pid int64, dev model.DeviceID) *int {
	for _, r := range c.Rows {
		if r.ProcessID == pid && r.Device == dev {
			return r.Rank
		}
	}
	return nil
}
