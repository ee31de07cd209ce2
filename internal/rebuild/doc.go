// Package rundir is what a run directory (MAIN) means once a session has
// written it: `deepprof report MAIN`. Rebuild chooses, once, where each
// derived result comes from (the kernel table: nsys's summary, the ncu
// timing pass or the deep pass; the run's NVTX regions; the stages: the
// workload's report), records the choice in the manifest, reads each input
// once for every file it feeds, writes every derived file, and brings the
// manifest in line with what MAIN holds (an artifact that is not there is
// "absent", never a link). It also holds env.json's type (EnvInfo), which
// the session writes and the summary reads.
//
// The layout itself (the name and kind of every file, the manifest, atomic
// writes) is package artifacts, which every layer may import; rundir sits
// above the parsers and renderers it drives. It runs no program: planning
// and running steps is package session, which calls Rebuild at the end.
package rebuild
