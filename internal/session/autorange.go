// Automatic NVTX ranges for a PyTorch program with none of its own
// (workload.auto_ranges): deepprof's sitecustomize on its PYTHONPATH.

package session

import (
	_ "embed"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed autorange/sitecustomize.py
var autoRangeSite []byte

// autoRangesNote is the manifest's note of a session that annotates.
const autoRangesNote = "auto ranges: the program's transformers generate() calls are marked where they are called (deepprof:generate, where TTFT starts), and those that push no NVTX range of the program's own are annotated with prefill, decode_all and decode_step, and in the CUPTI run each writes the model's facts from its config to timeline/model.json (deepprof's sitecustomize first on its PYTHONPATH; workload.auto_ranges=off turns it off)"

// startAutoRanges writes the sitecustomize into a folder of its own and
// returns it, with the function that removes it; "" when
// workload.auto_ranges is off.
func (s *Session) startAutoRanges() (dir string, done func(), err error) {
	if s.Cfg.Workload.AutoRanges != "on" {
		return "", func() {}, nil
	}
	dir, err = os.MkdirTemp("", "deepprof-autorange-")
	if err != nil {
		return "", func() {}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "sitecustomize.py"), autoRangeSite, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", func() {}, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// withAutoRanges is env with dir first on PYTHONPATH: before the
// PYTHONPATH env sets (workload.env), else the session's own.
func withAutoRanges(env []string, dir string) []string {
	if dir == "" {
		return env
	}
	base := os.Getenv("PYTHONPATH")
	if i := slices.IndexFunc(env, func(e string) bool { return strings.HasPrefix(e, "PYTHONPATH=") }); i >= 0 {
		base = strings.TrimPrefix(env[i], "PYTHONPATH=")
	}
	v := dir
	if base != "" {
		v += string(os.PathListSeparator) + base
	}
	return append(slices.Clone(env), "PYTHONPATH="+v) // later entries win
}
