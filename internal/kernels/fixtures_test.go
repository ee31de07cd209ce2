package kernels

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/nsys"
)

// fixturesDir is the repository's recorded tool outputs (fixtures/README.md
// says where each came from). The workplace's shared fixtures
// (../shared/fixtures/ncu, nsys) are copied there unchanged.
const fixturesDir = "../../fixtures"

// nameSources maps each kernel name in the fixtures to the files (relative
// to fixturesDir) that hold it.
type nameSources map[string][]string

var (
	fixtureNamesOnce sync.Once
	fixtureNamesVal  nameSources
	fixtureNamesErr  error
)

// fixtureNames reads every kernel name the recorded fixtures hold:
// kernel_name in every kernels.json, Kernel Name in every ncu CSV export
// (raw, details, log-file; plain or gzip), and Name in every nsys
// cuda_gpu_kern_sum CSV. ncu's ==PROF== log lines are not read: ncu cuts the
// names there ("nvjet_sm90_tst_64x8_64x16_2x1...").
func fixtureNames(t *testing.T) nameSources {
	t.Helper()
	fixtureNamesOnce.Do(func() { fixtureNamesVal, fixtureNamesErr = readFixtureNames() })
	if fixtureNamesErr != nil {
		t.Fatal(fixtureNamesErr)
	}
	return fixtureNamesVal
}

func readFixtureNames() (nameSources, error) {
	names := nameSources{}
	add := func(name, src string) {
		if name != "" && !slices.Contains(names[name], src) {
			names[name] = append(names[name], src)
		}
	}
	err := filepath.WalkDir(fixturesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fixturesDir, path)
		rel = filepath.ToSlash(rel)
		base := d.Name()
		switch {
		case base == "kernels.json":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var doc struct {
				Kernels []struct {
					Name string `json:"kernel_name"`
				} `json:"kernels"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				return errors.New(rel + ": " + err.Error())
			}
			for _, k := range doc.Kernels {
				add(k.Name, rel)
			}
		case strings.HasPrefix(rel, "nsys/") && strings.HasSuffix(base, ".csv"):
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			sums, err := nsys.ReadKernelSums(f, rel)
			if err != nil {
				return err
			}
			for _, s := range sums {
				add(s.Name, rel)
			}
		case strings.HasSuffix(base, ".csv") || strings.HasSuffix(base, ".csv.gz"):
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			r := ncu.NewReader(f, rel, ncu.Options{})
			for r.Scan() {
				switch rec := r.Record().(type) {
				case *model.Launch:
					add(rec.Kernel, rel)
				case *model.SyntaxError:
					return rec
				}
			}
			if err := r.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	return names, err
}
