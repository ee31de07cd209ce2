// Merging the run directories of one multi-node session (Make; see the
// package documentation).

package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Plan is what a merge copies: for each file of the merged run (relative
// to it, slash form), the file it comes from.
type Plan struct {
	Files []Copy
	// Notes say what was chosen where the inputs could disagree.
	Notes []string
	// Partial says why the merged run is partial: an input that was.
	Partial []string
}

// Copy is one file of the merged run and its source.
type Copy struct {
	Rel  string // in the merged run
	From string // a path on disk
	// Status and Reason are the file's in its input's manifest (a partial
	// export stays partial); "" when the input did not list it.
	Status Status
	Reason string
}

// The files a merged run takes from one input only: the provenance from
// the first; stage 1 and the plain-run reports from the first input that
// has them (the node of rank 0 writes them).
var (
	fromFirst = []string{ConfigYAML, InputsYAML, EnvJSON}
	fromOne   = []string{Stage1Report, Stage1Log, Stage1Runs, TimelineReport, TimelineLog, OracleJSON, OracleLog, NcuSections}
)

// Make plans the merge of the run directories dirs (each one node's run),
// in the order given. Two inputs holding one rank's deep pass, or one
// process's records, are an error naming both.
func Make(dirs []string) (*Plan, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no run directory to merge")
	}
	runs := make([]*Run, len(dirs))
	for i, d := range dirs {
		r, err := Open(d)
		if err != nil {
			return nil, err
		}
		runs[i] = r
	}
	p := &Plan{}
	manifests := map[string]Manifest{}
	for _, r := range runs {
		m := r.Manifest()
		manifests[r.Dir] = m
		if m.Status != StatusComplete {
			p.Partial = append(p.Partial, fmt.Sprintf("%s is %s: %s", r.Dir, m.Status, m.Reason))
		}
	}
	owner := map[string]string{} // merged rel -> input dir
	add := func(rel, dir string) error {
		key := strings.TrimSuffix(rel, ".gz") // a file and its gzipped copy are one
		if prev, ok := owner[key]; ok {
			return fmt.Errorf("merge: %s is in two run directories, %s and %s: each rank and each process must come from one node (were they recorded twice?)", key, prev, dir)
		}
		owner[key] = dir
		c := Copy{Rel: rel, From: filepath.Join(dir, filepath.FromSlash(rel))}
		if a, ok := manifests[dir].Find(strings.TrimSuffix(rel, ".gz")); ok {
			c.Status, c.Reason = a.Status, a.Reason
		}
		p.Files = append(p.Files, c)
		return nil
	}
	one := func(run *Run, rel string) (string, bool) {
		for _, cand := range []string{rel, rel + ".gz"} {
			if st, err := os.Stat(run.Path(cand)); err == nil && st.Mode().IsRegular() {
				return cand, true
			}
		}
		return "", false
	}
	for _, rel := range fromFirst {
		if c, ok := one(runs[0], rel); ok {
			if err := add(c, runs[0].Dir); err != nil {
				return nil, err
			}
		}
	}
	for _, rel := range fromOne {
		for _, r := range runs {
			if c, ok := one(r, rel); ok {
				if err := add(c, r.Dir); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	for _, r := range runs {
		for _, dir := range []string{TimelineCupti, NcuRanks} {
			err := filepath.WalkDir(r.Path(dir), func(p string, d fs.DirEntry, err error) error {
				if errors.Is(err, fs.ErrNotExist) && p == r.Path(dir) {
					return fs.SkipDir
				}
				if err != nil || d.IsDir() {
					return err
				}
				if !d.Type().IsRegular() {
					return fmt.Errorf("merge: %s: not a regular file (a link is not followed)", p)
				}
				rel, err := filepath.Rel(r.Dir, p)
				if err != nil {
					return err
				}
				if IsTemp(d.Name()) {
					return nil // a write that never finished
				}
				return add(filepath.ToSlash(rel), r.Dir)
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if _, ok := owner[NcuRankExec]; !ok {
		for _, r := range runs {
			if c, ok := one(r, NcuRankExec); ok {
				_ = add(c, r.Dir)
				break
			}
		}
	}
	if len(runs) > 1 {
		p.Notes = append(p.Notes, fmt.Sprintf("merged from %d run directories (%s); %s and %s are the first's, stage 1's files the first that has them",
			len(runs), strings.Join(dirs, ", "), EnvJSON, ConfigYAML))
	}
	slices.SortFunc(p.Files, func(a, b Copy) int { return strings.Compare(a.Rel, b.Rel) })
	return p, nil
}

// Write copies the plan's files into run, each written atomically, and
// records them in its manifest as the inputs' raw files.
func (p *Plan) Write(run *Run) error {
	for _, n := range p.Notes {
		run.Note("%s", n)
	}
	for _, why := range p.Partial {
		run.MarkPartial("merged from a partial run: " + why)
	}
	for _, c := range p.Files {
		if err := copyInto(run, c); err != nil {
			run.MarkPartial(fmt.Sprintf("the merge stopped at %s: %v", c.Rel, err))
			return err
		}
	}
	return nil
}

func copyInto(run *Run, c Copy) error {
	f, err := os.Open(c.From)
	if err != nil {
		return err
	}
	defer f.Close()
	err = run.WriteStream(c.Rel, func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
	if err == nil {
		if c.Status == "" || c.Status == StatusAbsent {
			c.Status, c.Reason = StatusComplete, ""
		}
		run.Record(c.Rel, c.Status, c.Reason)
	}
	return err
}

// Ranks lists the ranks whose deep pass the plan holds, from their folder
// names (ncu/ranks/rank<R>/).
func (p *Plan) Ranks() []string {
	var out []string
	for _, c := range p.Files {
		if rest, ok := strings.CutPrefix(c.Rel, NcuRanks+"/"); ok {
			if d := path.Dir(rest); d != "." && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}
