// Package workloads holds deepprof's default workload script, embedded.
//
// The script (hf_causal_lm.py) is embedded in the binary. The default
// profiles name it by its path in this repository
// (scripts/workloads/hf_causal_lm.py); run from a directory that does not
// have it, deepprof writes the embedded copy to its cache and runs that
// (Resolve). The script's contract with deepprof (its argv, environment
// and report) is package workload's.
package workloads
