package workloads

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// Script is the default workload's path as the profiles name it.
const Script = "scripts/workloads/hf_causal_lm.py"

//go:embed hf_causal_lm.py
var script []byte

// Source is the embedded script.
func Source() []byte { return script }

// Resolve returns the file to run for a workload path: the path itself
// when it names something other than the default script or when that file
// exists (a checkout of this repository, or the user's own copy), else
// the embedded script written to cacheDir/deepprof/workloads/<hash>/ (once;
// atomically). cacheDir "" is os.UserCacheDir.
func Resolve(path, cacheDir string) (string, bool, error) {
	if filepath.ToSlash(filepath.Clean(path)) != Script {
		return path, false, nil
	}
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	}
	if cacheDir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", false, fmt.Errorf("the default workload script: %s is not here and there is no cache folder to write the embedded copy to: %w", Script, err)
		}
		cacheDir = d
	}
	sum := sha256.Sum256(script)
	out := filepath.Join(cacheDir, "deepprof", "workloads", hex.EncodeToString(sum[:8]), filepath.Base(Script))
	if b, err := os.ReadFile(out); err == nil && string(b) == string(script) {
		return out, true, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".hf_causal_lm.py.tmp-*")
	if err != nil {
		return "", false, err
	}
	_, werr := tmp.Write(script)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), out)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return "", false, werr
	}
	return out, true, nil
}
