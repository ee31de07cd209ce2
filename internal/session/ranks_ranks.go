// The rank wrapper: a profiler started in every rank of a multi-GPU
// workload (see the package documentation, "Ranks").

package session

import (
	_ "embed"
	"strconv"
)

// Script is the wrapper's source (rank_exec.py): written to the run
// directory as rundir.NcuRankExec, run by the workload's Python.
//
//go:embed rank_exec.py
var Script []byte

// All is Exec's only for every rank at once (the deep pass in lockstep).
const All = -1

// Exec is the argv, after the launcher's, that runs profiler in each rank
// around program: python runs the wrapper at script, which replaces
// rundir.RankPlaceholder in profiler and program with the rank and execs
// them. With only >= 0, the ranks other than only run program alone.
func Exec(python, script string, only int, profiler, program []string) []string {
	argv := []string{python, script, "--program", strconv.Itoa(len(program))}
	if only >= 0 {
		argv = append(argv, "--only", strconv.Itoa(only))
	}
	argv = append(argv, "--")
	argv = append(argv, profiler...)
	return append(argv, program...)
}
