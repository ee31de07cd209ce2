// The types the facade hands out that are declared in internal packages,
// named here so that a program of another module can name them too
// (TestFacadeTypes).

package harness

import (
	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

type Aggregation = facts.Aggregation

type BalanceRow = facts.BalanceRow

type Bound = facts.Bound

type CategoryTime = facts.CategoryTime

type Claim = facts.Claim

type Communication = facts.Communication

type CommunicationRow = facts.CommunicationRow

type DeviceID = model.DeviceID

type Environment = facts.Environment

type SummaryKernels = facts.Kernels

type KernelsWarmup = facts.KernelsWarmup

type SummaryRegions = facts.Regions

type KernelRow = facts.KernelRow

type KernelStats = model.KernelStats

type KernelTable = model.KernelTable

type KernelTotals = model.KernelTotals

type MFU = facts.MFU

type MFURow = facts.MFURow

type Model = workload.Model

type Narrative = facts.Narrative

type Operator = workload.Operator

type Operators = facts.Operators

type Peak = machine.Peak

type PhaseGPU = facts.PhaseGPU

type PhaseGap = facts.PhaseGap

type PhaseRow = facts.PhaseRow

type PhaseWarmup = facts.PhaseWarmup

type Phases = facts.Phases

type PhasesLeftOut = facts.PhasesLeftOut

type Program = facts.Program

type ProgramKind = facts.ProgramKind

type Range = model.Range

type Rank = facts.Rank

type Recommendation = facts.Recommendation

type Region = facts.Region

type RegionKernel = facts.RegionKernel

type RegionMetric = facts.RegionMetric

type RegionReport = facts.RegionReport

type RegionRow = facts.RegionRow

type RegionScope = facts.RegionScope

type RooflinePt = facts.RooflinePt

type Rule = facts.Rule

type Rung = facts.Rung

type Sample = facts.Sample

type Serving = facts.Serving

// Decode is the decode's steps as the timeline shows them (TPOT, TTFT).
type Decode = facts.Decode

// DecodeRun is one run (a generate) of decode steps.
type DecodeRun = facts.DecodeRun

type Spread = model.Spread

type Stage = facts.Stage

type StageProcess = facts.StageProcess

type StageRank = facts.StageRank

type StageTimes = facts.StageTimes

type Stages = facts.Stages

type Summary = facts.Summary

type Tokens = workload.Tokens

type WhatIf = facts.WhatIf

type WhatIfRow = facts.WhatIfRow
