// The last check before a JSON writer: a number that is not finite,
// named by its JSON path.

package input

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// NonFiniteError is a number that is not finite, at Path.
type NonFiniteError struct {
	Path  string // JSON path, "" for the value itself
	Value float64
	steps []string
}

func (e *NonFiniteError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("the value is %v", e.Value)
	}
	return fmt.Sprintf("%s is %v", e.Path, e.Value)
}

// CheckFinite returns a *NonFiniteError for the first number of v (in field, then index,
// then sorted key order) that is NaN or infinite, or nil. It follows what
// encoding/json writes: exported fields under their json names, fields
// tagged "-" left out, embedded structs inline. The path is made only for
// the number found: a value of many rows is checked without allocating.
func CheckFinite(v any) error {
	if e := walk(reflect.ValueOf(v)); e != nil {
		// its steps, innermost first
		var b strings.Builder
		for i := len(e.steps) - 1; i >= 0; i-- {
			b.WriteString(e.steps[i])
		}
		e.Path = strings.TrimPrefix(b.String(), ".")
		e.steps = nil
		return e
	}
	return nil
}

func walk(v reflect.Value) *NonFiniteError {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return &NonFiniteError{Value: f}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return walk(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes: encoded as a string
		}
		for i := 0; i < v.Len(); i++ {
			if e := walk(v.Index(i)); e != nil {
				return e.in(fmt.Sprintf("[%d]", i))
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if e := walk(v.MapIndex(k)); e != nil {
				return e.in("." + fmt.Sprint(k))
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			e := walk(v.Field(i))
			if e == nil {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			switch {
			case name != "":
				return e.in("." + name)
			case !f.Anonymous:
				return e.in("." + f.Name)
			}
			return e
		}
	}
	return nil
}

// in adds step, the way into the value where the number was found, to
// its path (built innermost first).
func (e *NonFiniteError) in(step string) *NonFiniteError {
	e.steps = append(e.steps, step)
	return e
}
