package config

import "github.com/llm-perf-opt/deepprof/internal/input"

// closest is package input's Closest: the one rule of every "did you
// mean" deepprof prints.
func closest(s string, candidates []string) string { return input.Closest(s, candidates) }
