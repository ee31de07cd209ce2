package deepprof_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
)

// summarySchema is summary.json's JSON Schema, made from its Go type.
const summarySchema = "docs/summary.schema.json"

// TestSummarySchema (issue 38): docs/summary.schema.json is summary.json's
// contract, made from its one type (facts.Summary: every key, required
// unless the writer may leave it out, null where the writer may write
// null, no key beside them) by schemaOf; -update writes it anew. Every
// recorded run's summary.json validates against it, and a summary with a
// key the contract lacks, or a number where a list belongs, does not.
func TestSummarySchema(t *testing.T) {
	t.Parallel()
	doc := schemaDoc()
	made, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	made = append(made, '\n')
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		require.NoError(t, os.WriteFile(summarySchema, made, 0o644))
	}
	kept, err := os.ReadFile(summarySchema)
	require.NoError(t, err)
	require.Equal(t, string(made), string(kept), "%s is made from facts.Summary: go test -run TestSummarySchema -update", summarySchema)

	c := jsonschema.NewCompiler()
	sdoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(kept))
	require.NoError(t, err)
	require.NoError(t, c.AddResource(summarySchema, sdoc))
	sch, err := c.Compile(summarySchema)
	require.NoError(t, err)

	runs, err := filepath.Glob("fixtures/runs/*/" + rundir.SummaryJSON)
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	for _, p := range runs {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustRead(t, p)))
		require.NoError(t, err, p)
		assert.NoError(t, sch.Validate(inst), p)
	}

	var good map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, runs[0]), &good))
	for name, edit := range map[string]func(map[string]any){
		"an unknown key": func(m map[string]any) { m["surprise"] = 1 },
		"a wrong type":   func(m map[string]any) { m["anomalies"] = 3 },
		"another format": func(m map[string]any) { m["format"] = "deepprof-summary/0" },
		"a missing key":  func(m map[string]any) { delete(m, "stages") },
	} {
		m := map[string]any{}
		b, _ := json.Marshal(good)
		require.NoError(t, json.Unmarshal(b, &m))
		edit(m)
		b, _ = json.Marshal(m)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		require.NoError(t, err)
		assert.Error(t, sch.Validate(inst), name)
	}
}

// schemaDoc is summary.json's schema: facts.Summary and every type it
// holds, each named type a definition of its own.
func schemaDoc() map[string]any {
	defs := map[string]any{}
	root := schemaOf(reflect.TypeFor[facts.Summary](), defs)
	s := defs[defName(reflect.TypeFor[facts.Summary]())].(map[string]any)
	s["properties"].(map[string]any)["format"] = map[string]any{"const": summary.Format}
	return map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/llm-perf-opt/deepprof/" + summarySchema,
		"title":       "deepprof summary.json (" + summary.Format + ")",
		"description": "Made from facts.Summary by schema_test.go; docs/run-directory.md says what each part means.",
		"$ref":        root["$ref"],
		"$defs":       defs,
	}
}

// defName names a named type's definition: package.Type.
func defName(t reflect.Type) string {
	return t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:] + "." + t.Name()
}

// schemaOf is the schema of what encoding/json writes of a value of type
// t: a named struct as a reference to its definition in defs.
func schemaOf(t reflect.Type, defs map[string]any) map[string]any {
	if t == reflect.TypeFor[json.RawMessage]() || t.Kind() == reflect.Interface {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return map[string]any{"anyOf": []any{schemaOf(t.Elem(), defs), map[string]any{"type": "null"}}}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": []any{"array", "null"}, "items": schemaOf(t.Elem(), defs)}
	case reflect.Map:
		return map[string]any{"type": []any{"object", "null"}, "additionalProperties": schemaOf(t.Elem(), defs)}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Struct:
		if t.Name() == "" {
			return structSchema(t, defs)
		}
		name := defName(t)
		if _, ok := defs[name]; !ok {
			defs[name] = nil // a type that holds itself refers to itself
			defs[name] = structSchema(t, defs)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	panic("schemaOf: no rule for " + t.String())
}

// structSchema is an object with t's JSON keys as encoding/json writes
// them (embedded structs' keys at its level), each required unless
// omitempty, and no other key.
func structSchema(t reflect.Type, defs map[string]any) map[string]any {
	props := map[string]any{}
	required := []any{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			if tag == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				add(f.Type)
				continue
			}
			if name == "" {
				name = f.Name
			}
			props[name] = schemaOf(f.Type, defs)
			if !slices.Contains(strings.Split(opts, ","), "omitempty") {
				required = append(required, name)
			}
		}
	}
	add(t)
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}
