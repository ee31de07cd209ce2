// Package deepprof is the root of deepprof, a Go test-harness framework for
// NVIDIA-backed deep profiling of LLM inference. The library is under
// harness/, the command under cmd/deepprof. This package holds only the
// top-level tests: export_test.go (every recorded export through the readers
// and the kernel table, against golden files), regions_test.go, and
// gpu_test.go (real sessions, behind the gpu build tag).
package deepprof
