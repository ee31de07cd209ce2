// Package config loads a session's settings: profiles, overrides, checks.
//
// The settings of a Stage 2 profiling session are YAML profiles from
// profiles/ composed in order, then key=value overrides from the command
// line, checked against a typed schema (Config) and dumped as the fully
// resolved config.yaml of a run. A Config is plain data.
//
// Composition. Load reads each named profile (stage2 when none is named).
// A profile may start with a Hydra-style list
//
//	defaults: [ncu/default, nsys/default, workloads/tiny-llama]
//
// whose entries (profiles of the groups ncu, nsys, workloads: the folders of
// profiles/) are composed, in order, before the file itself. Later values
// win; maps merge key by key; lists and scalars replace. Then the overrides
// apply, in order:
//
//	ncu.launch_count=3                     set a key that exists
//	nvtx.include=[prefill,decode_all]      values are YAML: a list, an int, a bool
//	+workload.env.CUDA_LAUNCH_BLOCKING=1   add a key to a free-form map (workload.env, model.options)
//	ncu=roofline                           replace the ncu/* entry of a defaults list with ncu/roofline
//	+nsys=default                          compose nsys/default after the named profiles
//
// A string key takes the override's text verbatim (quote it to keep
// surrounding spaces). An unknown key, a value of the wrong type or an
// invalid value is an *Error naming the key, the closest valid key or value,
// and where it was set (file:line, or "override").
//
// GPU tests take overrides from DEEPPROF_OVERRIDES (space-separated, quotes
// group) and then from the arguments after go test's -args: see GoTestOverrides.
//
// Why koanf (github.com/knadh/koanf/v2) does the merging: it is small and
// maintained, merges in exactly the order it is told to (no hidden
// precedence of environment over flags over files), keeps no global state
// (unlike viper, whose package-level instance and case-folding of keys would
// leak between tests and lose snake_case), and takes its YAML parser and map
// providers as plug-ins, so this package reads YAML with go.yaml.in/yaml/v3
// itself (keeping line numbers for errors) and hands koanf plain maps. The
// final decode into Config goes through mapstructure with ErrorUnused and no
// weak typing, as a second check behind the schema walk.
//
// This package decides what a session is configured to do; it runs nothing
// and does not check that tools or input files exist (see CheckInputs).
package config
