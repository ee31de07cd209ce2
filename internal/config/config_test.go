package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sebdah/goldie/v2"

	"github.com/llm-perf-opt/deepprof/internal/config"
)

const profilesDir = "../../profiles"

func load(t *testing.T, overrides ...string) *config.Config {
	t.Helper()
	c, err := config.Load(config.LoadOptions{Dir: profilesDir, Overrides: overrides})
	if err != nil {
		t.Fatalf("Load(%q): %v", overrides, err)
	}
	return c
}

// TestEveryProfile composes stage2 with each profile of profiles/ and
// checks the result.
func TestEveryProfile(t *testing.T) {
	var names []string
	err := filepath.WalkDir(profilesDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".yaml" {
			rel, _ := filepath.Rel(profilesDir, p)
			names = append(names, strings.TrimSuffix(filepath.ToSlash(rel), ".yaml"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("found %d profiles in %s, want at least 10: %v", len(names), profilesDir, names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c, err := config.Load(config.LoadOptions{Dir: profilesDir, Profiles: []string{"stage2", name}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if g, p, ok := strings.Cut(name, "/"); ok && g == "ncu" && c.NCU.Preset != p {
				t.Errorf("ncu.preset = %q, want %q (the preset's file name)", c.NCU.Preset, p)
			}
		})
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden    string
		overrides []string
	}{
		{"stage2-resolved.yaml", nil},
		{"stage2-roofline-llama3-8b-resolved.yaml", []string{"ncu=roofline", "workloads=llama3-8b", "ncu.launch_count=6", "+workload.env.HF_HUB_OFFLINE=1"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			b, err := load(t, tc.overrides...).YAML()
			if err != nil {
				t.Fatal(err)
			}
			g := goldie.New(t, goldie.WithFixtureDir("../../golden/config"), goldie.WithNameSuffix(""))
			g.Assert(t, tc.golden, b)
		})
	}
}

// TestRoundTrip reads config.yaml back: the same YAML comes out.
func TestRoundTrip(t *testing.T) {
	c := load(t, "ncu=full", "+model.options.rope_scaling={type: linear, factor: 2.5}", "run.id=r1")
	b, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := config.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := back.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(b), string(b2)); diff != "" {
		t.Errorf("config.yaml read back differs (-written +read):\n%s", diff)
	}
}

func TestOverrides(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides []string
		check     func(*config.Config) any // returns the value looked at
		want      any
	}{
		{"int", []string{"ncu.launch_count=3"}, func(c *config.Config) any { return c.NCU.LaunchCount }, 3},
		{"bool", []string{"regions.aggregate=false"}, func(c *config.Config) any { return c.Regions.Aggregate }, false},
		{"string verbatim", []string{"model.name=Qwen/Qwen2-0.5B #1"}, func(c *config.Config) any { return c.Model.Name }, "Qwen/Qwen2-0.5B #1"},
		{"string that looks like an int", []string{"run.id=0042"}, func(c *config.Config) any { return c.Run.ID }, "0042"},
		{"quoted string", []string{`nvtx.domain=" LLM "`}, func(c *config.Config) any { return c.NVTX.Domain }, " LLM "},
		{"list", []string{"nvtx.include=[prefill,decode_all/decode_step]"}, func(c *config.Config) any { return c.NVTX.Include }, []string{"prefill", "decode_all/decode_step"}},
		{"empty list", []string{"nvtx.include="}, func(c *config.Config) any { return c.NVTX.Include }, []string{}},
		{"list of numbers as strings", []string{"ncu.extra_args=[--cache-control, none, --clock-control, 0]"}, func(c *config.Config) any { return c.NCU.ExtraArgs }, []string{"--cache-control", "none", "--clock-control", "0"}},
		{"duration", []string{"workload.timeout=90s"}, func(c *config.Config) any { return c.Workload.Timeout.Std().Seconds() }, 90.0},
		{"nested map key", []string{"model.options.hidden_size=1024"}, func(c *config.Config) any { return c.Model.Options["hidden_size"] }, 1024},
		{"existing env key", []string{"workload.env.TOKENIZERS_PARALLELISM=true"}, func(c *config.Config) any { return c.Workload.Env["TOKENIZERS_PARALLELISM"] }, "true"},
		{"+ env key", []string{"+workload.env.CUDA_LAUNCH_BLOCKING=1"}, func(c *config.Config) any { return c.Workload.Env["CUDA_LAUNCH_BLOCKING"] }, "1"},
		{"+ options map", []string{"+model.options.rope_scaling={type: linear, factor: 2}"}, func(c *config.Config) any { return c.Model.Options["rope_scaling"] }, map[string]any{"type": "linear", "factor": 2}},
		{"+ then set", []string{"+model.options.a.b=1", "model.options.a.b=2"}, func(c *config.Config) any { return c.Model.Options["a"] }, map[string]any{"b": 2}},
		{"later wins", []string{"device=cuda:1", "device=cuda:2"}, func(c *config.Config) any { return c.Device }, "cuda:2"},
		{"gpu uuid", []string{"device=GPU-5c8b2a1e-0f3d-4b7a-9c6e-1a2b3c4d5e6f"}, func(c *config.Config) any { return c.Device }, "GPU-5c8b2a1e-0f3d-4b7a-9c6e-1a2b3c4d5e6f"},
		{"map replaced", []string{"workload.env={A: b}"}, func(c *config.Config) any { return c.Workload.Env }, map[string]string{"A": "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.check(load(t, tc.overrides...))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOverrideErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides []string
		want      string // the whole message
		key       string
		suggest   string
	}{
		{"unknown key", []string{"ncu.lauch_count=3"}, "override: unknown key ncu.lauch_count (did you mean ncu.launch_count?)", "ncu.lauch_count", "ncu.launch_count"},
		{"unknown section", []string{"nxu.set=full"}, "override: unknown key nxu.set (did you mean ncu.set?)", "nxu.set", "ncu.set"},
		{"wrong type int", []string{"ncu.launch_count=three"}, `override: ncu.launch_count: want an integer, got "three"`, "ncu.launch_count", ""},
		{"wrong type float", []string{"workload.repeats=1.5"}, `override: workload.repeats: want an integer, got 1.5`, "workload.repeats", ""},
		{"wrong type bool", []string{"regions.aggregate=yes"}, `override: regions.aggregate: want true or false, got "yes"`, "regions.aggregate", ""},
		{"wrong type list", []string{"nvtx.include=prefill"}, `override: nvtx.include: want a list such as [a, b], got "prefill"`, "nvtx.include", ""},
		{"bad duration", []string{"ncu.timeout=ten"}, `override: ncu.timeout: want a duration such as 10m or 90s, got "ten"`, "ncu.timeout", ""},
		{"bad nsys duration", []string{"nsys.timeout=-5m"}, `override: nsys.timeout: want a positive duration, got "-5m"`, "nsys.timeout", ""},
		{"retired key", []string{"ncu.kernel_name_base=function"}, "override: ncu.kernel_name_base was removed (" + retiredWhy + "): delete it", "ncu.kernel_name_base", ""},
		{"invalid value", []string{"timeline.tool=nsy"}, `override: timeline.tool: "nsy" is not one of auto, nsys, cupti, ncu (did you mean nsys?)`, "timeline.tool", "nsys"},
		{"invalid clock control", []string{"timeline.ncu_clock_control=bse"}, `override: timeline.ncu_clock_control: "bse" is not one of none, base (did you mean base?)`, "timeline.ncu_clock_control", "base"},
		{"invalid cache control", []string{"timeline.ncu_cache_control=al"}, `override: timeline.ncu_cache_control: "al" is not one of none, all (did you mean all?)`, "timeline.ncu_cache_control", "all"},
		{"invalid replay mode", []string{"ncu.replay_mode=app_range"}, `override: ncu.replay_mode: "app_range" is not one of kernel, range, app-range (did you mean app-range?)`, "ncu.replay_mode", "app-range"},
		{"invalid device", []string{"device=cuda0"}, `override: device: "cuda0": want cuda:N or a GPU UUID such as GPU-5c8b2a1e-0f3d-4b7a-9c6e-1a2b3c4d5e6f`, "device", ""},
		// issue 53: an index past any GPU (and past an int) is the user's
		// error too, not a failure further on
		{"run root with a newline", []string{"run.root=runs\nsummary: forged"}, `override: run.root: "runs\nsummary: forged": holds a control or invisible character: want a plain folder path`, "run.root", ""},
		{"device index overflows", []string{"device=cuda:99999999999999999999"}, `override: device: "cuda:99999999999999999999": no GPU has that index: want cuda:N with N from 0 to 65535`, "device", ""},
		{"repeats", []string{"workload.repeats=0"}, "override: workload.repeats: must be at least 1, got 0", "workload.repeats", ""},
		{"per kernel launches", []string{"ncu.per_kernel_launches=0"}, "override: ncu.per_kernel_launches: must be at least 1, got 0", "ncu.per_kernel_launches", ""},
		{"region group", []string{"regions.groups=[sol, ocupancy]"}, `override: regions.groups: "ocupancy" is not one of duration, sol, occupancy, dram, instructions (did you mean occupancy?)`, "regions.groups", "occupancy"},
		{"+ on a schema key", []string{"+ncu.set=full"}, "override: +ncu.set: ncu.set is a key of the schema and exists: set it without +", "ncu.set", ""},
		{"+ outside a map", []string{"+ncu.foo=1"}, "override: unknown key ncu.foo (did you mean ncu.set?); + adds keys only under workload.env and model.options", "ncu.foo", "ncu.set"},
		{"new map key without +", []string{"workload.env.TOKENIZERS_PARALLELSM=1"}, "override: unknown key workload.env.TOKENIZERS_PARALLELSM (did you mean workload.env.TOKENIZERS_PARALLELISM?); add it with +workload.env.TOKENIZERS_PARALLELSM=1", "workload.env.TOKENIZERS_PARALLELSM", "workload.env.TOKENIZERS_PARALLELISM"},
		{"+ on an existing map key", []string{"+model.options.hidden_size=1"}, "override: +model.options.hidden_size: the key exists: set it without +", "model.options.hidden_size", ""},
		{"env values are strings", []string{"+workload.env.A.B=1"}, "override: workload.env.A.B: workload.env maps names to strings; a name has no keys below it", "workload.env.A.B", ""},
		{"section", []string{"run=x"}, "override: run is a section, not a value: set one of run.id, run.root", "run", ""},
		{"section near a group", []string{"workload=gpt2"}, "override: workload is a section, not a value: set one of workload.argv, workload.auto_ranges, workload.env, workload.inputs, workload.launcher, workload.name, workload.plain_run, workload.python, workload.repeat_by, workload.repeats, workload.timeout, or choose a workloads/* profile with workloads=gpt2", "workload", "workloads"},
		{"preset by key", []string{"ncu.preset=full"}, "override: ncu.preset names the ncu/* profile composed: select one with ncu=full", "ncu.preset", ""},
		{"not UTF-8", []string{"+workload.env.X=\xff"}, `override: "+workload.env.X=\xff": not UTF-8 text`, "workload.env.X", ""},
		{"no =", []string{"ncu.set"}, `override: "ncu.set": want key=value`, "ncu.set", ""},
		{"unknown group profile", []string{"ncu=rooflin"}, "override: no profile ncu/rooflin in ../../profiles or the embedded defaults (did you mean ncu/roofline?)", "profile", "ncu/roofline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Load(config.LoadOptions{Dir: profilesDir, Overrides: tc.overrides})
			if err == nil {
				t.Fatalf("Load(%q) succeeded", tc.overrides)
			}
			if err.Error() != tc.want {
				t.Errorf("error:\n got %s\nwant %s", err, tc.want)
			}
			var e *config.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not a *config.Error", err)
			}
			if e.Key != tc.key || e.Suggest != tc.suggest {
				t.Errorf("Key, Suggest = %q, %q; want %q, %q", e.Key, e.Suggest, tc.key, tc.suggest)
			}
		})
	}
}

// TestSeveralInvalid reports every invalid value, each with its key.
func TestSeveralInvalid(t *testing.T) {
	_, err := config.Load(config.LoadOptions{Dir: profilesDir, Overrides: []string{"report.top_n=0", "timeline.top_n=0"}})
	want := "override: timeline.top_n: must be at least 1, got 0\noverride: report.top_n: must be at least 1, got 0"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

func TestGroupOverride(t *testing.T) {
	c := load(t, "ncu=roofline", "workloads=gpt2")
	if c.NCU.Set != "roofline" || c.NCU.Preset != "roofline" || c.Model.Arch != "GPT2LMHeadModel" {
		t.Errorf("ncu.set, ncu.preset, model.arch = %q, %q, %q; want roofline, roofline, GPT2LMHeadModel", c.NCU.Set, c.NCU.Preset, c.Model.Arch)
	}
	for _, s := range c.Sources {
		if strings.HasSuffix(s, "ncu/default.yaml") || strings.HasSuffix(s, "tiny-llama.yaml") {
			t.Errorf("Sources hold %s, replaced by a group override: %q", s, c.Sources)
		}
	}
	// The preset's keys come before stage2's own and before overrides.
	c = load(t, "ncu=full", "ncu.per_kernel_launches=3")
	if c.NCU.Set != "full" || c.NCU.PerKernelLaunches != 3 {
		t.Errorf("ncu.set, ncu.per_kernel_launches = %q, %d; want full, 3", c.NCU.Set, c.NCU.PerKernelLaunches)
	}

	// +group appends after the profiles.
	c, err := config.Load(config.LoadOptions{Dir: profilesDir, Profiles: []string{"workloads/gpt2"}, Overrides: []string{"+ncu=timing"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gpu__time_duration.sum"}, c.NCU.Metrics); diff != "" || c.NCU.Set != "" {
		t.Errorf("+ncu=timing: ncu.set %q, metrics diff:\n%s", c.NCU.Set, diff)
	}

	// A group override with no defaults entry to replace.
	_, err = config.Load(config.LoadOptions{Dir: profilesDir, Profiles: []string{"workloads/gpt2"}, Overrides: []string{"ncu=timing"}})
	want := "override: ncu=timing: no defaults list holds a ncu/* entry to replace; write +ncu=timing to add one"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}

// writeProfiles makes a profiles folder from name -> YAML text.
func writeProfiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCompositionOrder(t *testing.T) {
	dir := writeProfiles(t, map[string]string{
		"base.yaml": "defaults: [w/one, g/x]\nworkload:\n  argv: [base]\n  repeats: 5\n",
		"w/one.yaml": "defaults: [w/inner]\n" +
			"workload:\n  argv: [one]\n  repeats: 1\n  env: {A: one, B: one}\n  inputs: [a, b]\nmodel:\n  options: {x: 1, y: {z: 1}}\n",
		"w/two.yaml":   "workload:\n  repeats: 2\n  env: {B: two}\n  inputs: [c]\nmodel:\n  options: {y: {w: 2}}\n",
		"w/inner.yaml": "workload:\n  name: inner\n  repeats: 9\n",
		"g/x.yaml":     "nvtx:\n  domain: X\n",
		"g/y.yaml":     "nvtx:\n  domain: Y\n",
	})
	c, err := config.Load(config.LoadOptions{Dir: dir, Profiles: []string{"base", "w/two"}, Overrides: []string{"g=y"}})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Name    string
		Argv    []string
		Repeats int
		Env     map[string]string
		Inputs  []string
		Options map[string]any
		Domain  string
		Sources []string
	}
	got := view{c.Workload.Name, c.Workload.Argv, c.Workload.Repeats, c.Workload.Env, c.Workload.Inputs, c.Model.Options, c.NVTX.Domain, c.Sources}
	want := view{
		Name:    "inner",          // from the innermost default, never overwritten
		Argv:    []string{"base"}, // base's own keys win over its defaults
		Repeats: 2,                // w/two comes last
		Env:     map[string]string{"A": "one", "B": "two"},
		Inputs:  []string{"c"}, // lists replace
		Options: map[string]any{"x": 1, "y": map[string]any{"z": 1, "w": 2}},
		Domain:  "Y", // g=y replaced g/x
		Sources: []string{"defaults", dir + "/w/inner.yaml", dir + "/w/one.yaml", dir + "/g/y.yaml", dir + "/base.yaml", dir + "/w/two.yaml", "override g=y"},
	}
	want.Sources = want.Sources[:len(want.Sources)-1] // group overrides are not key overrides
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	c, err = config.Load(config.LoadOptions{Dir: dir, Profiles: []string{"w/two", "base"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Workload.Repeats != 5 || c.NVTX.Domain != "X" {
		t.Errorf("base after w/two: repeats %d, domain %q; want 5, X", c.Workload.Repeats, c.NVTX.Domain)
	}
}

func TestFileErrors(t *testing.T) {
	dir := writeProfiles(t, map[string]string{
		"unknown.yaml":      "workload:\n  argv: [x]\nncu:\n  lauch_count: 3\n",
		"retired.yaml":      "workload:\n  argv: [x]\nncu:\n  set: basic\n  kernel_name_base: demangled\n",
		"type.yaml":         "workload:\n  argv: [x]\n  repeats: three\n",
		"syntax.yaml":       "workload:\n  argv: [x]\n\trepeats: 3\n",
		"invalid.yaml":      "workload:\n  argv: [x]\n\n  repeats: 0\n",
		"section.yaml":      "ncu: full\n",
		"top.yaml":          "- a\n- b\n",
		"defaults.yaml":     "defaults:\n  - w/one\n  - ncu/rooflin\n",
		"cycle.yaml":        "defaults: [w/loop]\n",
		"w/one.yaml":        "workload:\n  argv: [x]\n",
		"w/loop.yaml":       "defaults: [cycle]\n",
		"ncu/roofline.yaml": "ncu:\n  set: roofline\n",
		"empty.yaml":        "",
	})
	for _, tc := range []struct{ profile, want string }{
		{"unknown", "DIR/unknown.yaml:4: unknown key ncu.lauch_count (did you mean ncu.launch_count?)"},
		{"retired", "DIR/retired.yaml:5: ncu.kernel_name_base was removed (" + retiredWhy + "): delete it"},
		{"type", `DIR/type.yaml:3: workload.repeats: want an integer, got "three"`},
		{"syntax", "DIR/syntax.yaml:3: found character that cannot start any token"},
		{"invalid", "DIR/invalid.yaml:4: workload.repeats: must be at least 1, got 0"},
		{"section", `DIR/section.yaml:1: ncu: want a mapping of keys, got "full"`},
		{"top", "DIR/top.yaml:1: want a mapping of keys, got a list"},
		{"defaults", "DIR/defaults.yaml:3: no profile ncu/rooflin in DIR or the embedded defaults (did you mean ncu/roofline?)"},
		{"cycle", "DIR/w/loop.yaml:1: defaults: cycle DIR/cycle.yaml -> DIR/w/loop.yaml -> DIR/cycle.yaml"},
		{"empty", "workload.argv: is empty: name the program to run (a workloads/* profile sets it)"},
		{"unknwn", "no profile unknwn in DIR or the embedded defaults (did you mean unknown?)"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			_, err := config.Load(config.LoadOptions{Dir: dir, Profiles: []string{tc.profile}})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if got := strings.ReplaceAll(err.Error(), dir, "DIR"); got != tc.want {
				t.Errorf("error:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// retiredWhy is why ncu.kernel_name_base was removed, as errors say it.
const retiredWhy = "nothing read it: the deep pass always filters on mangled names matched by function (--kernel-name-base mangled, see ncu.MangledFunctionRegex)"

// TestReadBackRetiredKey: a config.yaml that an earlier deepprof wrote, with
// a key since removed (fixtures/runs/tiny-llama/config.yaml has
// ncu.kernel_name_base), is still read: the key never had an effect.
func TestReadBackRetiredKey(t *testing.T) {
	const recorded = "../../fixtures/runs/tiny-llama/config.yaml"
	b, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "kernel_name_base:") {
		t.Fatalf("%s holds no kernel_name_base: the test reads nothing retired", recorded)
	}
	c, err := config.Parse(recorded)
	if err != nil {
		t.Fatal(err)
	}
	if c.NCU.Set != "basic" || c.Workload.Timeout != "5m" {
		t.Errorf("ncu.set, workload.timeout = %q, %q; want basic, 5m (as recorded)", c.NCU.Set, c.Workload.Timeout)
	}
	if c.Nsys.Timeout != config.Default().Nsys.Timeout {
		t.Errorf("nsys.timeout = %q, want the default for a key the recording predates", c.Nsys.Timeout)
	}
}

func TestSplitOverrides(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ncu=roofline\tworkload.repeats=1 \n", []string{"ncu=roofline", "workload.repeats=1"}},
		{`'workload.argv=[a.py, --x]' "model.name=a b" c=\ d`, []string{"workload.argv=[a.py, --x]", "model.name=a b", "c= d"}},
		{`nvtx.domain=''`, []string{"nvtx.domain="}},
		{`a="it's"`, []string{"a=it's"}},
	} {
		if diff := cmp.Diff(tc.want, config.SplitOverrides(tc.in)); diff != "" {
			t.Errorf("SplitOverrides(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestOverridesFromEnv(t *testing.T) {
	t.Setenv(config.EnvOverrides, "ncu=roofline 'nvtx.include=[prefill, decode_all]'")
	got := config.OverridesFromEnv()
	want := []string{"ncu=roofline", "nvtx.include=[prefill, decode_all]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	c := load(t, got...)
	if c.NCU.Set != "roofline" || len(c.NVTX.Include) != 2 {
		t.Errorf("ncu.set %q, nvtx.include %q", c.NCU.Set, c.NVTX.Include)
	}
	// go test's flags are parsed: GoTestOverrides has the environment's first.
	if diff := cmp.Diff(want, config.GoTestOverrides()[:2]); diff != "" {
		t.Errorf("GoTestOverrides (-want +got):\n%s", diff)
	}
}

func TestDefaultValidates(t *testing.T) {
	c := config.Default()
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "workload.argv") {
		t.Errorf("Default().Validate() = %v, want an error naming workload.argv", err)
	}
	c.Workload.Argv = []string{"wl.py"}
	if err := c.Validate(); err != nil {
		t.Errorf("Default() with an argv: %v", err)
	}
	if got, want := c.Workload.Command(), []string{"python3", "wl.py"}; !cmp.Equal(got, want) {
		t.Errorf("Command() = %q, want %q", got, want)
	}
	c.Workload.Argv = []string{"./bench", "x.py"}
	if got, want := c.Workload.Command(), []string{"./bench", "x.py"}; !cmp.Equal(got, want) {
		t.Errorf("Command() = %q, want %q", got, want)
	}
}

func TestRegionsConfig(t *testing.T) {
	c := load(t, "regions.groups=[sol, duration]", "regions.top_kernels=0")
	rc, err := c.Regions.Config()
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Groups) != 2 || rc.Groups[0].Name != "sol" || rc.Groups[1].Name != "duration" || rc.TopKernels != 0 || !rc.Aggregate {
		t.Errorf("Regions.Config() = %+v", rc)
	}
}

func TestCheckInputs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompt.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := load(t, "workload.inputs=[prompt.txt]")
	if err := c.CheckInputs(dir); err != nil {
		t.Errorf("CheckInputs: %v", err)
	}
	c = load(t, "workload.inputs=[prompt.txt, missing.txt]")
	if err := c.CheckInputs(dir); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("CheckInputs = %v, want an error naming missing.txt", err)
	}
}

func TestTimelineCoverage(t *testing.T) {
	for ov, want := range map[string]float64{"timeline.coverage=0.95": 0.95, "timeline.coverage=1": 1} {
		cfg, err := config.Load(config.LoadOptions{Dir: profilesDir, Overrides: []string{ov}})
		if err != nil || cfg.Timeline.Coverage != want {
			t.Errorf("%s: got %v, %v; want %v", ov, cfg, err, want)
		}
	}
	for ov, msg := range map[string]string{
		"timeline.coverage=1.5":  "timeline.coverage: must be a share in (0, 1], got 1.5",
		"timeline.coverage=most": "timeline.coverage: want a number",
		"timeline.max_kernels=3": "timeline.max_kernels: must be at least 10, got 3",
	} {
		_, err := config.Load(config.LoadOptions{Dir: profilesDir, Overrides: []string{ov}})
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v, want an error holding %q", ov, err, msg)
		}
	}
}

// TestReportInvalid: the report's settings are checked at load time, each
// error naming its key.
func TestReportInvalid(t *testing.T) {
	for _, c := range []struct{ override, want string }{
		{"report.categories=[gemm=(unclosed]", "report.categories: "},
		{"report.categories=[no-equals-sign]", "report.categories: "},
		{"report.bound_threshold_pct=0", "report.bound_threshold_pct: must be in (0, 100], got 0"},
		{"report.bound_threshold_pct=101", "report.bound_threshold_pct: must be in (0, 100], got 101"},
		{"report.peak_tflops=-1", "report.peak_tflops: peaks must not be negative"},
		{"report.peak_memory_tbps=4.8", "report.peak_tflops: report.peak_memory_tbps is set"},
	} {
		_, err := config.Load(config.LoadOptions{Dir: profilesDir, Overrides: []string{c.override}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.override, err, c.want)
		}
	}
	c := load(t, "report.peak_tflops=500", "report.peak_memory_tbps=2", "report.categories=[attention=fmha]")
	if c.Report.PeakTFLOPS != 500 || len(c.Report.Categories) != 1 {
		t.Errorf("report = %+v", c.Report)
	}
}

// TestLauncherArgv: without a launcher the command runs as it is; torchrun
// by default is the workload's Python's, --standalone on one machine; a
// launcher argv of one's own (a node of a multi-node run) keeps its
// rendezvous options and gets no --standalone.
func TestLauncherArgv(t *testing.T) {
	same := func(what string, want, got []string) {
		t.Helper()
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", what, d)
		}
	}
	w := config.Default().Workload
	w.Argv = []string{"gen.py", "--tokens", "8"}
	same("no launcher", []string{"python3", "gen.py", "--tokens", "8"}, w.Launched(w.Command()))
	if w.LauncherArgv() != nil || w.Launcher.Ranks() != 1 {
		t.Errorf("no launcher: LauncherArgv %v, Ranks %d", w.LauncherArgv(), w.Launcher.Ranks())
	}

	w.Launcher = config.Launcher{Kind: config.LauncherTorchrun, NprocPerNode: 2, Argv: []string{}, DeepPass: config.DeepLockstep}
	same("torchrun", []string{"python3", "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "--no-python",
		"python3", "gen.py", "--tokens", "8"}, w.Launched(w.Command()))
	if w.Launcher.Ranks() != 2 {
		t.Errorf("Ranks = %d, want 2", w.Launcher.Ranks())
	}
	w.Launcher.Argv = []string{"torchrun", "--nnodes", "4", "--node-rank", "1", "--rdzv-endpoint", "head:29500"}
	same("a node's own launcher", []string{"torchrun", "--nnodes", "4", "--node-rank", "1", "--rdzv-endpoint", "head:29500",
		"--nproc-per-node", "2", "--no-python"}, w.LauncherArgv())

	cfg := config.Default()
	cfg.Workload.Argv = []string{"gen.py"}
	cfg.Workload.Launcher = config.Launcher{Kind: config.LauncherTorchrun, Argv: []string{}, DeepPass: "sideways"}
	cfg.Device = "GPU-5c8b2a1e-0f3d-4b7a-9c6e-1a2b3c4d5e6f"
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate accepted a launcher with no ranks, a bad deep_pass and a UUID device")
	}
	for _, want := range []string{"workload.launcher.nproc_per_node", "workload.launcher.deep_pass", "name the first GPU as cuda:N"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v\nwant it to name %q", err, want)
		}
	}
}
