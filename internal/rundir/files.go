package rundir

import (
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// ReadStats reads a stats CSV of the run (nsys's), plain or gzipped, named rel
// in errors.
func ReadStats[T any](run *Run, rel string, read func(io.Reader, string) ([]T, error)) ([]T, error) {
	f, err := run.OpenFile(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, rel)
}

// CuptiFiles lists the run's CUPTI record files (cupti-<pid>.tsv, or .gz
// in a recorded copy), relative to MAIN, sorted.
func CuptiFiles(run *Run) []string {
	ents, err := os.ReadDir(run.Path(TimelineCupti))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, "cupti-") && (strings.HasSuffix(n, ".tsv") || strings.HasSuffix(n, ".tsv.gz")) {
			out = append(out, path.Join(TimelineCupti, n))
		}
	}
	slices.Sort(out)
	return out
}
