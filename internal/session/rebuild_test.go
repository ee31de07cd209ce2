package session_test

// The tests' sessions rebuild their runs as deepprof does: harness
// registers its rebuild (session.Rebuild).
import _ "github.com/llm-perf-opt/deepprof/harness"
