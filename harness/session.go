// The profiling session, wired once: the command and the test API both
// start theirs here.

package harness

import (
	"context"
	"io"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/session"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// sessionOptions say what a session runs with beside its configuration.
type sessionOptions struct {
	// NcuPath is the ncu the session runs; Ncu, where not nil, is what a
	// probe of it already found (the preflight's), so it is not probed
	// again.
	NcuPath string
	Ncu     *machine.Tool
	// Log takes the session's notices; Progress its step lines,
	// rewritten in place where ProgressLive.
	Log, Progress io.Writer
	ProgressLive  bool
	// Now is the session's clock (nil: time.Now).
	Now func() time.Time
}

// newSession is a profiling session of cfg: its steps run as processes,
// its run directory rebuilt by rebuild.Run with the timeline it read, and its env.json naming the
// machine's GPUs and the tools found (ncu, and nsys: where it is and its
// version, or why there is none), probed when env.json is written, not
// before: a plan or a dry run probes nothing.
func newSession(cfg *config.Config, o sessionOptions) (*session.Session, error) {
	y, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	sel, err := session.Devices(cfg)
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	// Report left nil: the session ends with rebuild.Run given the
	// timeline it read.
	s := &session.Session{Cfg: cfg, ConfigYAML: y, Runner: session.ExecRunner{}, Ncu: o.NcuPath, Now: now,
		Log: o.Log, Progress: o.Progress, ProgressLive: o.ProgressLive}
	s.Env = func() ([]byte, error) {
		found, errs := tools(cfg, o)
		return workload.NewEnvInfo(func() (machine.Provenance, error) { return machine.Collect(machine.Open(), sel) }, found, errs).JSON()
	}
	return s, nil
}

// tools are the profilers env.json names: each found, with its version,
// or why it was not.
func tools(cfg *config.Config, o sessionOptions) (map[string]machine.Tool, map[string]error) {
	ctx := context.Background()
	found, errs := map[string]machine.Tool{}, map[string]error{}
	probe := func(name, path string) {
		if t, err := machine.Probe(ctx, path); err == nil {
			found[name] = t
		} else {
			errs[name] = err
		}
	}
	if o.Ncu != nil {
		found["ncu"] = *o.Ncu
	} else {
		probe("ncu", o.NcuPath)
	}
	if p := cfg.Nsys.Path; p != "" {
		probe("nsys", p)
	} else if t, err := machine.Find("nsys", machine.EnvFromOS()); err != nil {
		errs["nsys"] = err
	} else {
		probe("nsys", t.Path)
	}
	return found, errs
}
