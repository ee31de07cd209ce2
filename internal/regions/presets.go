package regions

import (
	"fmt"
	"slices"
	"strings"
)

// preset is an ncu/* profile (profiles/ncu) and the metric groups of
// DefaultGroups whose every metric its deep pass measures: each is a column
// of the raw page it exports.
type preset struct {
	name   string // chosen with ncu=NAME
	set    string // its ncu --set
	groups []string
}

// presets, cheapest first. Checked by TestPresetsMeasureTheirGroups against
// the raw pages recorded on an H200 with each set
// (fixtures/ncu/h200-llama-decode-{basic,roofline,full}) and against the
// set each profiles/ncu/NAME.yaml names. The timing preset measures no group:
// its export holds kernel durations only.
var presets = []preset{
	{name: "default", set: "basic", groups: []string{"duration", "sol", "occupancy"}},
	{name: "roofline", set: "roofline", groups: []string{"duration", "sol"}},
	{name: "full", set: "full", groups: []string{"duration", "sol", "occupancy", "dram", "instructions"}},
}

// measuredBy says which preset measures each of groups, the cheapest that
// does: "duration, sol and occupancy with ncu=default (--set basic); dram
// and instructions with ncu=full (--set full)". A group no preset measures
// (a Config's own table) is named as such.
func measuredBy(groups []string) string {
	var parts []string
	done := map[string]bool{}
	for _, p := range presets {
		var gs []string
		for _, g := range groups {
			if !done[g] && slices.Contains(p.groups, g) {
				gs = append(gs, g)
				done[g] = true
			}
		}
		if len(gs) > 0 {
			parts = append(parts, fmt.Sprintf("%s with ncu=%s (--set %s)", andList(gs), p.name, p.set))
		}
	}
	var rest []string
	for _, g := range groups {
		if !done[g] {
			rest = append(rest, g)
		}
	}
	if len(rest) > 0 {
		parts = append(parts, andList(rest)+" with no preset of deepprof's (add its metrics to ncu.metrics)")
	}
	return strings.Join(parts, "; ")
}

// andList joins "a", "a and b", "a, b and c".
func andList(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
