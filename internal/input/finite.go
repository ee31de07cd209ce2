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
// tagged "-" left out, embedded structs inline.
func CheckFinite(v any) error {
	return walk(reflect.ValueOf(v), "")
}

func walk(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return &NonFiniteError{Path: path, Value: f}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return walk(v.Elem(), path)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes: encoded as a string
		}
		for i := 0; i < v.Len(); i++ {
			if err := walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if err := walk(v.MapIndex(k), join(path, fmt.Sprint(k))); err != nil {
				return err
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
			name, _, _ := strings.Cut(tag, ",")
			p := path
			switch {
			case name != "":
				p = join(path, name)
			case !f.Anonymous:
				p = join(path, f.Name)
			}
			if err := walk(v.Field(i), p); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
