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
	fromOne   = []string{Stage1Report, Stage1Log, Stage1Runs, TimelineReport, TimelineModel, TimelineLog, OracleJSON, OracleLog, NcuSections}
)

// Make plans the merge of the run directories dirs (each one node's run),
// in the order given. Two inputs holding one rank's deep pass, or one
// process's records, are an error naming both. Two nodes' record files of
// one name (a process id that came up on both) are two processes when
// machine, which says on what machine a record file's process ran, gives
// them different answers: the later one is renamed cupti-<pid>-<node>.tsv,
// <node> its input's position from 1. A nil machine, or one that cannot
// tell, keeps the refusal.
func Make(dirs []string, machine func(path string) (string, error)) (*Plan, error) {
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
	plan := &Plan{}
	manifests := map[string]Manifest{}
	for _, r := range runs {
		m := r.Manifest()
		manifests[r.Dir] = m
		if m.Status != StatusComplete {
			plan.Partial = append(plan.Partial, fmt.Sprintf("%s is %s: %s", r.Dir, m.Status, m.Reason))
		}
	}
	owner := map[string]string{} // merged rel -> input dir
	// addAs adds the file rel of the input dir as the merged run's to.
	addAs := func(to, rel, dir string) error {
		key := strings.TrimSuffix(to, ".gz") // a file and its gzipped copy are one
		if prev, ok := owner[key]; ok {
			return fmt.Errorf("merge: %s is in two run directories, %s and %s: each rank and each process must come from one node (were they recorded twice?)", key, prev, dir)
		}
		owner[key] = dir
		c := Copy{Rel: to, From: filepath.Join(dir, filepath.FromSlash(rel))}
		if a, ok := manifests[dir].Find(strings.TrimSuffix(rel, ".gz")); ok {
			c.Status, c.Reason = a.Status, a.Reason
		}
		plan.Files = append(plan.Files, c)
		return nil
	}
	add := func(rel, dir string) error { return addAs(rel, rel, dir) }
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
	for i, r := range runs {
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
				if strings.HasPrefix(d.Name(), ".") {
					return nil // not a record (an older deepprof's temporary file)
				}
				rel = filepath.ToSlash(rel)
				if dir == TimelineCupti && !recordedHere(manifests[r.Dir], rel) {
					return fmt.Errorf("merge: %s: its session did not record it (%s of %s lists the records it made, not this one): a record of another run? Move it out of the run and merge again",
						p, ManifestJSON, r.Dir)
				}
				if dir == TimelineCupti {
					if to, why := renamed(rel, r.Dir, i+1, owner, machine); to != "" {
						plan.Notes = append(plan.Notes, why)
						return addAs(to, rel, r.Dir)
					}
				}
				return add(rel, r.Dir)
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
		plan.Notes = append(plan.Notes, fmt.Sprintf("merged from %d run directories (%s); %s and %s are the first's, stage 1's files the first that has them",
			len(runs), strings.Join(dirs, ", "), EnvJSON, ConfigYAML))
	}
	slices.SortFunc(plan.Files, func(a, b Copy) int { return strings.Compare(a.Rel, b.Rel) })
	return plan, nil
}

// recordedHere says whether the record file rel is one the session of m
// recorded: listed in its manifest, plain or gzipped. A manifest that
// lists no record file (a run made before manifests listed them) proves
// nothing either way, and accepts each.
func recordedHere(m Manifest, rel string) bool {
	listed := false
	for _, a := range m.Artifacts {
		if strings.HasPrefix(a.Path, TimelineCupti+"/") {
			listed = true
			if strings.TrimSuffix(a.Path, ".gz") == strings.TrimSuffix(rel, ".gz") {
				return true
			}
		}
	}
	return !listed
}

// renamed is the merged name of the record file rel of the input dir
// (node, from 1) when another input already holds a file of that name whose
// process ran on another machine, with the note that says so; "" when the
// name is free, or when machine cannot tell the two apart (Make then
// refuses the second).
func renamed(rel, dir string, node int, owner map[string]string, machine func(string) (string, error)) (string, string) {
	prev, taken := owner[strings.TrimSuffix(rel, ".gz")]
	if !taken || machine == nil {
		return "", ""
	}
	// The first node's file may be the other spelling: one gzipped, one not.
	firstRel := rel
	for _, cand := range []string{rel, strings.TrimSuffix(rel, ".gz"), strings.TrimSuffix(rel, ".gz") + ".gz"} {
		if st, err := os.Lstat(filepath.Join(prev, filepath.FromSlash(cand))); err == nil && st.Mode().IsRegular() {
			firstRel = cand
			break
		}
	}
	first, err1 := machine(filepath.Join(prev, filepath.FromSlash(firstRel)))
	second, err2 := machine(filepath.Join(dir, filepath.FromSlash(rel)))
	if err1 != nil || err2 != nil || first == "" || second == "" || first == second {
		return "", ""
	}
	name := path.Base(rel)
	ext := ".tsv"
	if strings.HasSuffix(name, ".tsv.gz") {
		ext = ".tsv.gz"
	}
	to := path.Join(path.Dir(rel), fmt.Sprintf("%s-%d%s", strings.TrimSuffix(name, ext), node, ext))
	return to, fmt.Sprintf("%s of %s is %s: its process id also ran on %s (%s), and this one on %s", rel, dir, to, first, prev, second)
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
