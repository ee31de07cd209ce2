package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// kind is what a key of the schema holds.
type kind int

const (
	kSection   kind = iota // a struct: named keys below
	kString                // any scalar's text
	kDuration              // a string time.ParseDuration accepts, or ""
	kInt                   // a YAML integer
	kFloat                 // a YAML number (an integer is taken as a float)
	kBool                  // a YAML boolean
	kStrings               // a list of scalars' texts
	kStringMap             // free-form map of scalars' texts (workload.env)
	kAnyMap                // free-form map of anything (model.options)
)

// field is one key of the schema.
type field struct {
	path     string
	kind     kind
	children map[string]*field // kSection only
}

var schemaRoot = sync.OnceValue(func() *field {
	return buildField("", reflect.TypeFor[Config]())
})

// schemaPaths lists every key path of the schema, sorted.
var schemaPaths = sync.OnceValue(func() []string {
	var out []string
	var walk func(f *field)
	walk = func(f *field) {
		if f.path != "" {
			out = append(out, f.path)
		}
		for _, c := range f.children {
			walk(c)
		}
	}
	walk(schemaRoot())
	sort.Strings(out)
	return out
})

func buildField(path string, t reflect.Type) *field {
	f := &field{path: path}
	switch {
	case t == reflect.TypeFor[Duration]():
		f.kind = kDuration
	case t.Kind() == reflect.Struct:
		f.kind = kSection
		f.children = map[string]*field{}
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("koanf")
			if tag == "" || tag == "-" || !sf.IsExported() {
				continue
			}
			f.children[tag] = buildField(joinPath(path, tag), sf.Type)
		}
	case t.Kind() == reflect.String:
		f.kind = kString
	case t.Kind() == reflect.Int:
		f.kind = kInt
	case t.Kind() == reflect.Float64:
		f.kind = kFloat
	case t.Kind() == reflect.Bool:
		f.kind = kBool
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		f.kind = kStrings
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		f.kind = kStringMap
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Interface:
		f.kind = kAnyMap
	default:
		panic(fmt.Sprintf("config: schema: %s has unsupported type %s", path, t))
	}
	return f
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// lookup finds the schema field for a key path. When the path goes into a
// free-form map, it returns the map's field and the rest of the path below
// it (for a kStringMap, more than one element is an error of the caller's).
// A nil field means the schema has no such key.
func lookup(path string) (f *field, rest []string) {
	f = schemaRoot()
	parts := strings.Split(path, ".")
	for i, p := range parts {
		switch f.kind {
		case kSection:
			c, ok := f.children[p]
			if !ok {
				return nil, nil
			}
			f = c
		case kStringMap, kAnyMap:
			return f, parts[i:]
		default:
			return nil, nil
		}
	}
	return f, nil
}

// Error is a configuration key that is unknown, holds the wrong type or
// an invalid value.
type Error struct {
	Source  string // where the value was set: "FILE:LINE", SourceOverride; "" when unknown
	Key     string // the key path: "ncu.launch_count"
	Msg     string // the whole message, naming Key
	Suggest string // the closest valid key or value, "" when there is none
}

// SourceOverride is the Source of a value set by an override (KEY=VALUE on
// the command line).
const SourceOverride = "override"

func (e *Error) Error() string {
	if e.Source == "" {
		return e.Msg
	}
	return e.Source + ": " + e.Msg
}

// unknownKey is the error for a key path the schema does not know.
func unknownKey(key string, candidates []string) *Error {
	e := &Error{Key: key, Msg: "unknown key " + key}
	if s := closest(key, candidates); s != "" {
		e.Suggest = s
		e.Msg += " (did you mean " + s + "?)"
	}
	return e
}

// retired are keys that deepprof no longer has, with why. A profile or an
// override that sets one is an error that says so; a config.yaml that an
// earlier deepprof wrote (read back by Parse) may hold one, and it is
// skipped: it never changed what a session did.
var retired = map[string]string{
	"ncu.kernel_name_base": "nothing read it: the deep pass always filters on mangled names matched by function (--kernel-name-base mangled, see ncu.MangledFunctionRegex)",
}

// retiredKey is the error for a key of retired, or nil.
func retiredKey(key string) *Error {
	why, ok := retired[key]
	if !ok {
		return nil
	}
	return &Error{Key: key, Msg: fmt.Sprintf("%s was removed (%s): delete it", key, why)}
}

// unknownValue is the error for a value outside a set.
func unknownValue(key, val string, valid []string) *Error {
	e := &Error{Key: key, Msg: fmt.Sprintf("%s: %q is not one of %s", key, val, strings.Join(valid, ", "))}
	if s := closest(val, valid); s != "" {
		e.Suggest = s
		e.Msg = fmt.Sprintf("%s: %q is not one of %s (did you mean %s?)", key, val, strings.Join(valid, ", "), s)
	}
	return e
}

// resolve follows a YAML alias.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// describe says what a YAML node holds, for "got ..." in an error.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return strconv.Quote(n.Value)
		}
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return n.Value
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "a YAML document"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// decodeValue turns a YAML node into the value koanf stores for a key of
// kind k: string, int, bool, []string, map[string]any. The error names path.
func decodeValue(path string, k kind, n *yaml.Node) (any, error) {
	n = resolve(n)
	wrong := func(want string) error {
		return &Error{Key: path, Msg: fmt.Sprintf("%s: want %s, got %s", path, want, describe(n))}
	}
	switch k {
	case kString, kDuration:
		if isNull(n) {
			return "", nil
		}
		if n.Kind != yaml.ScalarNode {
			if k == kDuration {
				return nil, wrong("a duration such as 10m")
			}
			return nil, wrong("a string")
		}
		if k == kDuration {
			if err := checkDuration(path, n.Value); err != nil {
				return nil, err
			}
		}
		return n.Value, nil
	case kInt:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return nil, wrong("an integer")
		}
		var v int
		if err := n.Decode(&v); err != nil {
			return nil, wrong("an integer")
		}
		return v, nil
	case kFloat:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!float" && n.ShortTag() != "!!int") {
			return nil, wrong("a number")
		}
		var v float64
		if err := n.Decode(&v); err != nil {
			return nil, wrong("a number")
		}
		return v, nil
	case kBool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			return nil, wrong("true or false")
		}
		var v bool
		if err := n.Decode(&v); err != nil {
			return nil, wrong("true or false")
		}
		return v, nil
	case kStrings:
		if isNull(n) {
			return []string{}, nil
		}
		if n.Kind != yaml.SequenceNode {
			return nil, wrong("a list such as [a, b]")
		}
		out := make([]string, 0, len(n.Content))
		for i, c := range n.Content {
			c = resolve(c)
			if c.Kind != yaml.ScalarNode || isNull(c) {
				return nil, &Error{Key: path, Msg: fmt.Sprintf("%s[%d]: want a string, got %s", path, i, describe(c))}
			}
			out = append(out, c.Value)
		}
		return out, nil
	case kStringMap:
		if isNull(n) {
			return map[string]any{}, nil
		}
		if n.Kind != yaml.MappingNode {
			return nil, wrong("a mapping of strings")
		}
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := resolve(n.Content[i]), resolve(n.Content[i+1])
			p := joinPath(path, key.Value)
			if val.Kind != yaml.ScalarNode {
				return nil, &Error{Key: p, Msg: fmt.Sprintf("%s: want a string, got %s", p, describe(val))}
			}
			if err := checkMapKey(path, key.Value); err != nil {
				return nil, err
			}
			out[key.Value] = val.Value
		}
		return out, nil
	case kAnyMap:
		if isNull(n) {
			return map[string]any{}, nil
		}
		if n.Kind != yaml.MappingNode {
			return nil, wrong("a mapping")
		}
		var out map[string]any
		if err := n.Decode(&out); err != nil {
			return nil, &Error{Key: path, Msg: fmt.Sprintf("%s: %v", path, err)}
		}
		for key := range out {
			if err := checkMapKey(path, key); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, wrong("a mapping") // kSection: handled by the caller
}

// checkMapKey rejects map keys that a key path could not address.
func checkMapKey(path, key string) error {
	if key == "" || strings.Contains(key, ".") {
		return &Error{Key: path, Msg: fmt.Sprintf("%s: key %q: keys may not be empty or hold '.'", path, key)}
	}
	return nil
}

func checkDuration(path, s string) error {
	if s == "" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return &Error{Key: path, Msg: fmt.Sprintf("%s: want a duration such as 10m or 90s, got %q", path, s)}
	}
	if d < 0 {
		return &Error{Key: path, Msg: fmt.Sprintf("%s: want a positive duration, got %q", path, s)}
	}
	if d > MaxTimeout {
		return &Error{Key: path, Msg: fmt.Sprintf("%s: at most %s (7 days), got %q: a step that long is a typo, not a profile", path, strings.TrimSuffix(MaxTimeout.String(), "0m0s"), s)}
	}
	return nil
}
