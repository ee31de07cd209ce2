package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
	"go.yaml.in/yaml/v3"

	deepprof "github.com/llm-perf-opt/deepprof"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// DefaultDir is the profiles folder, relative to the repository root.
const DefaultDir = "profiles"

// DefaultProfile is the profile composed when none is named.
const DefaultProfile = "stage2"

// LoadOptions says what Load composes.
type LoadOptions struct {
	// Dir is the profiles folder ("": DefaultDir). Profile names and
	// defaults entries are looked up in it; its sub-folders are the groups
	// (ncu, nsys, workloads).
	Dir string
	// Profiles are composed in order, each after its defaults list; nil
	// means [DefaultProfile]. A name ("stage2", "ncu/roofline",
	// "workloads/tiny-llama") is Dir/NAME.yaml; a name ending in .yaml or
	// .yml is a file path.
	Profiles []string
	// Overrides apply after the profiles, in order: key=value,
	// +key=value, group=name, +group=name (see the package doc).
	Overrides []string
	// Command, when set, is the program to profile (deepprof profile --
	// CMD ARGS...): it replaces the profiles' workload.argv and python,
	// names the workload and the model after the program, and drops the
	// profiles' model section (the default workload's shapes are not the
	// program's); overrides still apply after it (model.* facts, say).
	Command []string

	// readBack: the profile is a config.yaml a session wrote, whose retired
	// keys are skipped (see retired).
	readBack bool
}

// embeddedPrefix marks a profile read from the binary's embedded defaults
// (deepprof.Profiles) in file names: config.yaml's sources, errors, and the
// origin of each key.
const embeddedPrefix = "(embedded) profiles/"

// Load composes the profiles and overrides over Default, then checks the
// result. Every error names the key, and where it was set.
func Load(opts LoadOptions) (*Config, error) {
	l := &loader{
		dir:       opts.Dir,
		k:         koanf.New("."),
		origins:   map[string]string{},
		inFile:    map[string]bool{},
		outside:   map[string]bool{},
		overrides: map[string]string{},
		sel:       map[string]string{},
		selUsed:   map[string]bool{},
		readBack:  opts.readBack,
	}
	if l.dir == "" {
		l.dir = DefaultDir
	}
	if st, err := os.Stat(l.dir); err == nil && st.IsDir() {
		l.dirOK = true
	} else if l.dir != DefaultDir && !opts.readBack {
		return nil, &Error{Key: "profiles", Msg: fmt.Sprintf("--profiles %s: no such folder (the embedded default profiles are used when no folder is given)", l.dir)}
	}
	if !opts.readBack {
		l.emb = deepprof.Profiles
	}
	profiles := opts.Profiles
	if profiles == nil {
		profiles = []string{DefaultProfile}
	}

	// Overrides first split into group selections and key settings.
	var keys []override
	var appended []string
	for _, s := range opts.Overrides {
		o, err := parseOverride(s)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(o.key, ".") && l.isGroup(o.key) {
			if !filepath.IsLocal(o.value) || strings.ContainsAny(o.value, `/\`) {
				return nil, &Error{Source: SourceOverride, Key: o.key, Msg: fmt.Sprintf("%s=%s: a %s profile is a name in the profiles folder (%s), not a path", o.key, o.value, o.key, strings.Join(l.groupNames(o.key), ", "))}
			}
			ref := o.key + "/" + o.value
			if _, err := l.find(ref, ""); err != nil {
				return nil, withSource(SourceOverride, err)
			}
			if o.plus {
				appended = append(appended, ref)
			} else {
				l.sel[o.key] = o.value
			}
			continue
		}
		keys = append(keys, o)
	}

	if err := l.loadDefaults(); err != nil {
		return nil, err
	}
	for _, p := range profiles {
		if err := l.compose(p, "", ""); err != nil {
			return nil, err
		}
	}
	for g := range l.sel {
		if !l.selUsed[g] {
			return nil, &Error{Source: SourceOverride, Key: g, Msg: fmt.Sprintf(
				"%s=%s: no defaults list holds a %s/* entry to replace; write +%s=%s to add one",
				g, l.sel[g], g, g, l.sel[g])}
		}
	}
	for _, ref := range appended {
		if err := l.compose(ref, "", ""); err != nil {
			return nil, err
		}
	}
	if len(opts.Command) > 0 {
		if err := l.useCommand(opts.Command, keys); err != nil {
			return nil, err
		}
	}
	for _, o := range keys {
		if err := l.apply(o); err != nil {
			return nil, withSource(SourceOverride, err)
		}
		l.sources = append(l.sources, SourceOverride+" "+o.raw)
	}

	c, err := l.decode()
	if err != nil {
		return nil, err
	}
	c.Sources = l.sources
	c.Origins = l.provenance()
	if errs := validate(c); len(errs) > 0 {
		var all []error
		for _, e := range errs {
			e.Source = l.originOf(e.Key)
			all = append(all, e)
		}
		return nil, errors.Join(all...)
	}
	return c, nil
}

// Parse reads one profile file over Default, with no overrides; a defaults
// list in it names profiles beside it. It is how a written config.yaml is
// read back.
func Parse(path string) (*Config, error) {
	return Load(LoadOptions{Dir: filepath.Dir(path), Profiles: []string{path}, readBack: true})
}

type loader struct {
	dir     string
	k       *koanf.Koanf
	origins map[string]string // key path -> "FILE:LINE" or SourceOverride
	// inFile: the key's origin is a file outside the binary (outside).
	inFile  map[string]bool
	outside map[string]bool // profile files outside the binary, by path
	sources []string
	sel     map[string]string // group -> profile name, from group=name
	selUsed map[string]bool
	stack   []string // files being composed, for cycles
	// readBack skips retired keys instead of refusing them.
	readBack bool
	// dirOK: dir exists; emb: the embedded default profiles, under the
	// folder's files (nil when reading a config.yaml back).
	dirOK bool
	emb   fs.FS
	// overrides: key -> the override text that set it last.
	overrides map[string]string
}

// override is one parsed key=value.
type override struct {
	raw        string
	plus       bool
	key, value string
}

func parseOverride(s string) (override, error) {
	i := strings.IndexByte(s, '=')
	if i < 0 {
		return override{}, &Error{Source: SourceOverride, Key: s, Msg: fmt.Sprintf("%q: want key=value", s)}
	}
	o := override{raw: s, key: strings.TrimSpace(s[:i]), value: s[i+1:]}
	if strings.HasPrefix(o.key, "+") {
		o.plus = true
		o.key = o.key[1:]
	}
	if o.key == "" || strings.HasPrefix(o.key, ".") || strings.HasSuffix(o.key, ".") || strings.Contains(o.key, "..") {
		return override{}, &Error{Source: SourceOverride, Key: o.key, Msg: fmt.Sprintf("%q: want key=value with a key such as ncu.launch_count", s)}
	}
	if !utf8.ValidString(s) {
		// yaml would keep such a value as !!binary: config.yaml would then
		// not say what was run.
		return override{}, &Error{Source: SourceOverride, Key: o.key, Msg: fmt.Sprintf("%q: not UTF-8 text", s)}
	}
	return o, nil
}

func withSource(src string, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Source == "" {
		e.Source = src
	}
	return err
}

func (l *loader) originOf(key string) string {
	return l.origins[l.originKey(key)]
}

// originKey is the key whose origin key has: key itself, or the nearest
// section or map above it that has one ("" when none has).
func (l *loader) originKey(key string) string {
	for k := key; k != ""; {
		if _, ok := l.origins[k]; ok {
			return k
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return ""
}

// setOrigin records where key's value came from, the command line's
// (an override, the command after --): the keys under key lose theirs,
// the value replaced them.
func (l *loader) setOrigin(key, from string) {
	for k := range l.origins {
		if strings.HasPrefix(k, key+".") {
			delete(l.origins, k)
			delete(l.inFile, k)
		}
	}
	l.origins[key] = from
	l.inFile[key] = false
}

// loadDefaults loads Default() as the first layer.
func (l *loader) loadDefaults() error {
	b, err := Default().YAML()
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	out := map[string]any{}
	if err := l.walk("", schemaRoot(), doc.Content[0], out); err != nil {
		return err
	}
	l.sources = append(l.sources, "defaults")
	return l.k.Load(confmap.Provider(out, ""), nil)
}

// isGroup reports whether name is a folder of the profiles: the folder's
// or the embedded defaults'.
func (l *loader) isGroup(name string) bool {
	if l.dirOK {
		if st, err := os.Stat(filepath.Join(l.dir, name)); err == nil && st.IsDir() {
			return true
		}
	}
	if l.emb != nil && fs.ValidPath(name) {
		if st, err := fs.Stat(l.emb, name); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// groups lists the profile groups.
func (l *loader) groups() []string {
	var out []string
	add := func(ents []fs.DirEntry) {
		for _, e := range ents {
			if e.IsDir() && !slices.Contains(out, e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	if l.dirOK {
		ents, _ := os.ReadDir(l.dir)
		add(ents)
	}
	if l.emb != nil {
		ents, _ := fs.ReadDir(l.emb, ".")
		add(ents)
	}
	sort.Strings(out)
	return out
}

// names lists every profile name: the folder's and the embedded ones.
func (l *loader) names() []string {
	var out []string
	walk := func(fsys fs.FS) {
		_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && path.Ext(p) == ".yaml" {
				if n := strings.TrimSuffix(p, ".yaml"); !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
			return nil
		})
	}
	if l.dirOK {
		walk(os.DirFS(l.dir))
	}
	if l.emb != nil {
		walk(l.emb)
	}
	sort.Strings(out)
	return out
}

// find returns the file of a profile reference; from is the file whose
// defaults list names it ("" for the command line). A name is looked for
// in the profiles folder first, then among the embedded defaults (file
// names starting with embeddedPrefix).
func (l *loader) find(ref, from string) (string, error) {
	if ext := filepath.Ext(ref); ext == ".yaml" || ext == ".yml" {
		p := ref
		if from != "" && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(from), p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", &Error{Key: "profile", Msg: fmt.Sprintf("profile %s: %v", ref, err)}
		}
		return p, nil
	}
	if !filepath.IsLocal(filepath.FromSlash(ref)) {
		return "", &Error{Key: "profile", Msg: fmt.Sprintf("profile %s: a profile name stays inside the profiles folder (write a path ending in .yaml for a file elsewhere)", ref)}
	}
	if l.dirOK {
		p := filepath.Join(l.dir, filepath.FromSlash(ref)+".yaml")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	if l.emb != nil && fs.ValidPath(ref+".yaml") {
		if st, err := fs.Stat(l.emb, ref+".yaml"); err == nil && st.Mode().IsRegular() {
			return embeddedPrefix + ref + ".yaml", nil
		}
	}
	where := l.dir
	if l.emb != nil {
		where += " or the embedded defaults"
	}
	e := &Error{Key: "profile", Msg: fmt.Sprintf("no profile %s in %s", ref, where)}
	if s := closest(ref, l.names()); s != "" {
		e.Suggest = s
		e.Msg += " (did you mean " + s + "?)"
	}
	return "", e
}

// binarys reports whether the profile file p, as read (b), is the
// binary's own: embedded, or a file of the profiles folder whose content
// is the embedded profile of its name (a checkout of deepprof).
func (l *loader) binarys(p string, b []byte) bool {
	if strings.HasPrefix(p, embeddedPrefix) {
		return true
	}
	if l.emb == nil {
		return false
	}
	rel, err := filepath.Rel(l.dir, p)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	own, err := fs.ReadFile(l.emb, filepath.ToSlash(rel))
	return err == nil && bytes.Equal(own, b)
}

// readFile reads a profile file that find returned.
func (l *loader) readFile(p string) ([]byte, error) {
	if name, ok := strings.CutPrefix(p, embeddedPrefix); ok && l.emb != nil {
		return fs.ReadFile(l.emb, name)
	}
	return input.ReadFile(p)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// compose merges one profile: its defaults list first, then itself. pos is
// where it was named ("FILE:LINE" of a defaults entry, "" otherwise).
func (l *loader) compose(ref, from, pos string) error {
	path, err := l.find(ref, from)
	if err != nil {
		return withSource(pos, err)
	}
	for i, p := range l.stack {
		if p == path {
			cycle := strings.Join(append(l.stack[i:], path), " -> ")
			return &Error{Source: pos, Key: "defaults", Msg: "defaults: cycle " + cycle}
		}
	}
	l.stack = append(l.stack, path)
	defer func() { l.stack = l.stack[:len(l.stack)-1] }()

	b, err := l.readFile(path)
	if err != nil {
		return err
	}
	l.outside[path] = !l.binarys(path, b)
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			return fmt.Errorf("%s:%s: %s", path, m[1], m[2])
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		l.sources = append(l.sources, path)
		return nil // an empty file
	}
	if err := checkNodes(path, doc.Content[0], 0); err != nil {
		return err
	}
	root := resolve(doc.Content[0])
	if isNull(root) {
		l.sources = append(l.sources, path)
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: want a mapping of keys, got %s", path, root.Line, describe(root))
	}

	// The defaults list.
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "defaults" {
			continue
		}
		list := resolve(root.Content[i+1])
		if isNull(list) {
			continue
		}
		if list.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s:%d: defaults: want a list of profiles such as [ncu/default], got %s", path, list.Line, describe(list))
		}
		for _, n := range list.Content {
			n = resolve(n)
			at := fmt.Sprintf("%s:%d", path, n.Line)
			if n.Kind != yaml.ScalarNode || isNull(n) {
				return fmt.Errorf("%s: defaults: want a profile name such as ncu/default, got %s", at, describe(n))
			}
			entry := n.Value
			if g, _, ok := strings.Cut(entry, "/"); ok && filepath.Ext(entry) == "" {
				if name, sel := l.sel[g]; sel {
					entry = g + "/" + name
					l.selUsed[g] = true
				}
			}
			if err := l.compose(entry, path, at); err != nil {
				return err
			}
		}
	}

	out := map[string]any{}
	if err := l.walk(path, schemaRoot(), root, out); err != nil {
		return err
	}
	l.sources = append(l.sources, path)
	return l.k.Load(confmap.Provider(out, ""), nil)
}

// walk checks a mapping of a profile against the schema section sec and
// puts its values into out; file "" is Default (no origins recorded).
func (l *loader) walk(file string, sec *field, n *yaml.Node, out map[string]any) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := resolve(n.Content[i]), resolve(n.Content[i+1])
		key := kn.Value
		if sec.path == "" && key == "defaults" {
			continue
		}
		at := fmt.Sprintf("%s:%d", file, kn.Line)
		f := sec.children[key]
		if e := retiredKey(joinPath(sec.path, key)); f == nil && e != nil {
			if l.readBack {
				continue
			}
			e.Source = at
			return e
		}
		if f == nil {
			e := unknownKey(joinPath(sec.path, key), schemaPaths())
			e.Source = at
			return e
		}
		if f.kind == kSection {
			if isNull(vn) {
				continue
			}
			if vn.Kind != yaml.MappingNode {
				return &Error{Source: at, Key: f.path, Msg: fmt.Sprintf("%s: want a mapping of keys, got %s", f.path, describe(vn))}
			}
			sub := map[string]any{}
			out[key] = sub
			if err := l.walk(file, f, vn, sub); err != nil {
				return err
			}
			continue
		}
		v, err := decodeValue(f.path, f.kind, vn)
		if err != nil {
			return withSource(fmt.Sprintf("%s:%d", file, vn.Line), err)
		}
		out[key] = v
		if file != "" {
			l.origins[f.path], l.inFile[f.path] = fmt.Sprintf("%s:%d", file, vn.Line), l.outside[file]
			if f.kind == kStringMap {
				// Each entry its own origin: the maps of several files
				// merge.
				for j := 0; j+1 < len(vn.Content); j += 2 {
					k := f.path + "." + resolve(vn.Content[j]).Value
					l.origins[k], l.inFile[k] = fmt.Sprintf("%s:%d", file, vn.Content[j].Line), l.outside[file]
				}
			}
		}
	}
	return nil
}

// apply sets one key override.
func (l *loader) apply(o override) error {
	f, rest := lookup(o.key)
	if e := retiredKey(o.key); f == nil && e != nil {
		return e
	}
	if f == nil {
		cands := append(append(append([]string{}, schemaPaths()...), l.k.Keys()...), l.groups()...)
		e := unknownKey(o.key, cands)
		if o.plus {
			e.Msg += "; + adds keys only under workload.env and model.options"
		}
		return e
	}
	if f.kind == kSection {
		var keys []string
		for k := range f.children {
			keys = append(keys, f.path+"."+k)
		}
		sort.Strings(keys)
		e := &Error{Key: o.key, Msg: fmt.Sprintf("%s is a section, not a value: set one of %s", o.key, strings.Join(keys, ", "))}
		if g := input.Suggest(o.key, l.groups()); g != "" {
			e.Suggest = g
			e.Msg += fmt.Sprintf(", or choose a %s/* profile with %s=%s", g, g, o.value)
		}
		return e
	}
	if o.key == "ncu.preset" {
		return &Error{Key: o.key, Msg: fmt.Sprintf("ncu.preset names the ncu/* profile composed: select one with ncu=%s", o.value)}
	}

	var v any
	if rest == nil {
		if o.plus {
			return &Error{Key: o.key, Msg: fmt.Sprintf("+%s: %s is a key of the schema and exists: set it without +", o.key, o.key)}
		}
		var err error
		if v, err = overrideValue(o.key, f.kind, o.value); err != nil {
			return err
		}
	} else {
		if f.kind == kStringMap && len(rest) > 1 {
			return &Error{Key: o.key, Msg: fmt.Sprintf("%s: %s maps names to strings; a name has no keys below it", o.key, f.path)}
		}
		exists := l.k.Exists(o.key)
		switch {
		case exists && o.plus:
			return &Error{Key: o.key, Msg: fmt.Sprintf("+%s: the key exists: set it without +", o.key)}
		case !exists && !o.plus:
			var siblings []string // the keys of the same map
			for _, k := range l.k.Keys() {
				if strings.HasPrefix(k, f.path+".") {
					siblings = append(siblings, k)
				}
			}
			e := unknownKey(o.key, siblings)
			e.Msg += fmt.Sprintf("; add it with +%s=%s", o.key, o.value)
			return e
		}
		for _, p := range rest {
			if err := checkMapKey(f.path, p); err != nil {
				return err
			}
		}
		var err error
		if f.kind == kStringMap {
			v, err = overrideValue(o.key, kString, o.value)
		} else {
			v, err = anyValue(o.key, o.value)
		}
		if err != nil {
			return err
		}
	}

	l.k.Delete(o.key)
	parts := strings.Split(o.key, ".")
	m := map[string]any{parts[len(parts)-1]: v}
	for i := len(parts) - 2; i >= 0; i-- {
		m = map[string]any{parts[i]: m}
	}
	l.setOrigin(o.key, SourceOverride)
	l.overrides[o.key] = o.raw
	return l.k.Load(confmap.Provider(m, ""), nil)
}

// overrideValue reads an override's text as a value of kind k: strings and
// durations verbatim (a quoted one unquoted), the rest as YAML.
func overrideValue(key string, k kind, text string) (any, error) {
	if k == kString || k == kDuration {
		s := unquote(text)
		if k == kDuration {
			if err := checkDuration(key, s); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, &Error{Key: key, Msg: fmt.Sprintf("%s: value %q is not YAML: %v", key, text, err)}
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	if len(doc.Content) > 0 {
		n = doc.Content[0]
	}
	return decodeValue(key, k, n)
}

// anyValue reads an override's text as any YAML value (model.options).
func anyValue(key, text string) (any, error) {
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		return nil, &Error{Key: key, Msg: fmt.Sprintf("%s: value %q is not YAML: %v", key, text, err)}
	}
	if m, ok := v.(map[string]any); ok {
		for k := range m {
			if err := checkMapKey(key, k); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// unquote removes one level of YAML quotes around s, if s is quoted.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		var v string
		if err := yaml.Unmarshal([]byte(s), &v); err == nil {
			return v
		}
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// decode unmarshals the composed map into a Config, strictly: every key
// must be a field (ErrorUnused) and no value is converted between types.
func (l *loader) decode() (*Config, error) {
	var c Config
	dc := &mapstructure.DecoderConfig{
		ErrorUnused:      true,
		WeaklyTypedInput: false,
		TagName:          "koanf",
		DecodeHook:       nil,
	}
	if err := l.k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{Tag: "koanf", DecoderConfig: dc}); err != nil {
		return nil, fmt.Errorf("config: decoding the composed configuration: %w", err)
	}
	return &c, nil
}

// useCommand sets the workload to a command given after "--". Overrides of
// the command itself (workload.argv, workload.python) are refused: there
// would be two commands.
func (l *loader) useCommand(cmd []string, keys []override) error {
	for _, o := range keys {
		if o.key == "workload.argv" || o.key == "workload.python" {
			return &Error{Source: SourceOverride, Key: o.key, Msg: fmt.Sprintf("%s: the command after -- is the workload; give one or the other", o.raw)}
		}
	}
	name := ProgramName(cmd)
	l.k.Delete("model")
	// The program knows nothing of $DEEPPROF_REPEATS: stage 1 runs it
	// workload.repeats times (one unless overridden), and every profiled
	// step once; its repeated ranges (a decode_step per token) give the
	// stages' repeats.
	for key, v := range map[string]any{"workload.python": "", "workload.argv": cmd, "workload.name": name, "model.name": name,
		"workload.repeats": 1, "workload.repeat_by": RepeatByProcess} {
		if err := l.k.Set(key, v); err != nil {
			return err
		}
		l.setOrigin(key, "command after --")
	}
	l.sources = append(l.sources, "command after -- ("+strings.Join(cmd, " ")+")")
	return nil
}

// ProgramName names a command's workload: its program's base name, or the
// script's for an interpreter running one ("python3 serve.py" is serve).
func ProgramName(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	name := filepath.Base(cmd[0])
	for _, a := range cmd[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if ext := filepath.Ext(a); ext == ".py" || ext == ".sh" {
			name = filepath.Base(a)
		}
		break
	}
	return strings.TrimSuffix(name, filepath.Ext(name))
}

// provenance is where each value of the composed configuration came from,
// key by key (Config.Origins).
func (l *loader) provenance() []Origin {
	var out []Origin
	for _, k := range l.k.Keys() {
		ok := l.originKey(k)
		from := l.origins[ok]
		switch {
		case from == SourceOverride:
			// the override that set it: its own, else its group's
			arg := l.overrides[k]
			for p := k; arg == "" && p != ""; {
				i := strings.LastIndexByte(p, '.')
				if i < 0 {
					break
				}
				p = p[:i]
				arg = l.overrides[p]
			}
			from = SourceOverride + " " + arg
		case from == "":
			from = "built-in default (config.Default)"
		}
		out = append(out, Origin{Key: k, From: from, InFile: l.inFile[ok]})
	}
	return out
}

// groupNames lists the profiles of a group, by name.
func (l *loader) groupNames(group string) []string {
	var out []string
	for _, n := range l.names() {
		if g, name, ok := strings.Cut(n, "/"); ok && g == group {
			out = append(out, name)
		}
	}
	return out
}

// MaxDepth is the deepest nesting of mappings and lists a profile may have:
// far above any deepprof profile (4), far below what makes reading one
// slow.
const MaxDepth = 32

// checkNodes refuses what a profile never holds, before it is read: a key
// given twice in one mapping (both lines named: the last would silently
// win) and nesting deeper than MaxDepth.
func checkNodes(path string, n *yaml.Node, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("%s:%d: nested deeper than %d levels: not a deepprof profile", path, n.Line, MaxDepth)
	}
	if n.Kind == yaml.MappingNode {
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode {
				if line, ok := first[k.Value]; ok {
					return fmt.Errorf("%s:%d: %s is given twice (first at line %d): give each key once", path, k.Line, k.Value, line)
				}
				first[k.Value] = k.Line
			}
		}
	}
	for _, c := range n.Content {
		if err := checkNodes(path, c, depth+1); err != nil {
			return err
		}
	}
	return nil
}
