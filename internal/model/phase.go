package model

import (
	"fmt"
	"path"
)

// The two phases of an inference.
const (
	Prefill = "prefill"
	Decode  = "decode"
)

// Names are the stage names, or path.Match patterns ("decode*"), of each
// phase. A workload report's stages are "prefill" and "decode"; a program's
// NVTX ranges are its own ("prefill", "decode_all").
type Names struct {
	Prefill []string `koanf:"prefill" yaml:"prefill" json:"prefill"`
	Decode  []string `koanf:"decode" yaml:"decode" json:"decode"`
}

// DefaultPhases is what a profile that names no phases gets: deepprof's own
// workloads' stage names and the NVTX ranges they push.
var DefaultPhases = Names{Prefill: []string{"prefill"}, Decode: []string{"decode", "decode_all"}}

// OrDefault is n, or DefaultPhases when n names no phase at all.
func (n Names) OrDefault() Names {
	if len(n.Prefill) == 0 && len(n.Decode) == 0 {
		return DefaultPhases
	}
	return n
}

// Of is the phase of a top-level stage ("" for none, and for a sub-stage:
// its time is inside its parent's). Prefill's patterns are tried first.
func (n Names) Of(stage, parent string) string {
	if parent != "" {
		return ""
	}
	n = n.OrDefault()
	for _, p := range []struct {
		phase    string
		patterns []string
	}{{Prefill, n.Prefill}, {Decode, n.Decode}} {
		for _, pat := range p.patterns {
			if ok, _ := path.Match(pat, stage); ok {
				return p.phase
			}
		}
	}
	return ""
}

// Check reports a pattern path.Match cannot use: a *PatternError.
func (n Names) Check() error {
	for _, p := range []struct {
		key      string
		patterns []string
	}{{"phases.prefill", n.Prefill}, {"phases.decode", n.Decode}} {
		for _, pat := range p.patterns {
			if _, err := path.Match(pat, ""); err != nil {
				return &PatternError{Key: p.key, Pattern: pat, Err: err}
			}
		}
	}
	return nil
}

// PatternError is a phase pattern path.Match cannot use, and the key that
// gives it (phases.prefill, phases.decode).
type PatternError struct {
	Key, Pattern string
	Err          error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("%s: %q: %v (a stage name, or a pattern with * ? [...])", e.Key, e.Pattern, e.Err)
}

func (e *PatternError) Unwrap() error { return e.Err }
