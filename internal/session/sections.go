package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// sectionsCache is where ncu's section list (ncu --list-sections) is kept
// for the ncu binary at path: one file per binary, named by its path, size
// and modification time, so that another ncu, or this one reinstalled,
// lists its own. "" when there is no cache folder or no such binary.
func sectionsCache(ncuPath string) string {
	st, err := os.Stat(ncuPath)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(ncuPath)
	if err != nil {
		return ""
	}
	h := sha256.Sum256([]byte(abs + "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00" + strconv.FormatInt(st.ModTime().UnixNano(), 10)))
	return filepath.Join(base, "deepprof", "ncu-sections", hex.EncodeToString(h[:10])+".txt")
}

// cachedSections writes ncu's section list into run from the cache, and
// reports whether it did.
func (s *Session) cachedSections(run *rundir.Run) bool {
	p := sectionsCache(s.Ncu)
	if p == "" {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) == 0 {
		return false
	}
	if err := run.Write(rundir.NcuSections, b); err != nil {
		return false
	}
	run.Record(rundir.NcuSections, rundir.StatusComplete, fmt.Sprintf("ncu --list-sections of this ncu, from deepprof's cache (%s)", p))
	return true
}

// cacheSections keeps the section list the run's ncu printed, for the
// next session; a cache that cannot be written is only slower.
func (s *Session) cacheSections(run *rundir.Run) {
	p := sectionsCache(s.Ncu)
	if p == "" {
		return
	}
	b, err := run.ReadFile(rundir.NcuSections)
	if err != nil || len(b) == 0 {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".sections-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}
