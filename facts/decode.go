package facts

// Decode is the decode's steps as the timeline shows them: the step range
// (a decode_step in each decode_all, or one range a token between
// prefills), its runs (a generate's steps, one after another) and what a
// token takes in steady state. TPOT is StepMS; TTFT is TTFTMS.
type Decode struct {
	// Step is the step range's label ("decode_step", "decode").
	Step string `json:"step"`
	// Runs is how many runs (generates) the steps came in, in every
	// process; Steps how many steps they hold.
	Runs  int `json:"runs"`
	Steps int `json:"steps"`
	// SteadyRuns and SteadySteps are the runs the figures use: those with
	// no step in a warm-up (Steady).
	SteadyRuns  int `json:"steady_runs"`
	SteadySteps int `json:"steady_steps"`
	// StepMS is a steady step: in the steady runs, from each step's start
	// to the next step's, pooled; StepSDMS the spread of the runs' own
	// step times (nil with one run).
	StepMS   float64  `json:"step_ms"`
	StepSDMS *float64 `json:"step_sd_ms,omitempty"`
	// TTFTMS is the steady runs' mean time to their first token: from the
	// generate() call (a deepprof:generate mark) or else the prefill's
	// start, to the first step's start; TTFTFrom says which; nil when no
	// run has either.
	TTFTMS   *float64 `json:"ttft_ms,omitempty"`
	TTFTFrom string   `json:"ttft_from,omitempty"`
	// Warmup are the runs left out, in order, each with its step time:
	// a slow generate (new shapes) named with its cost.
	Warmup []DecodeRun `json:"warmup,omitempty"`
}

// DecodeRun is one run of steps: its process, its place among that
// process's runs (1-based, in start order), its steps and its time per
// step.
type DecodeRun struct {
	ProcessID int64   `json:"process_id"`
	Index     int     `json:"index"`
	Steps     int     `json:"steps"`
	StepMS    float64 `json:"step_ms"`
	// Measured says the generate was left out for one of deepprof's
	// library's measurements (its own or a peer's) in it, not by the
	// warm-up rule.
	Measured bool `json:"measured,omitempty"`
}
