package workflow

import (
	"reflect"
	"sync"
)

// deepCopy returns a copy of v that shares no memory with it: maps, slices and pointers are
// copied all the way down, so an operation can change the copy while the caller keeps the
// original. It reads the types, so a field added to the record needs nothing here.
func deepCopy[T any](v T) T {
	var out T
	copyValue(reflect.ValueOf(&out).Elem(), reflect.ValueOf(v))
	return out
}

// copyValue sets dst, a zero or shallow copy of src, to a deep copy of src.
func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if !src.IsNil() {
			p := reflect.New(src.Type().Elem())
			copyValue(p.Elem(), src.Elem())
			dst.Set(p)
		}
	case reflect.Map:
		if !src.IsNil() {
			m := reflect.MakeMapWithSize(src.Type(), src.Len())
			for it := src.MapRange(); it.Next(); {
				v := reflect.New(src.Type().Elem()).Elem()
				copyValue(v, it.Value())
				m.SetMapIndex(it.Key(), v)
			}
			dst.Set(m)
		}
	case reflect.Slice:
		if !src.IsNil() {
			s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
			reflect.Copy(s, src)
			if shares(src.Type().Elem()) {
				for i := range src.Len() {
					copyValue(s.Index(i), src.Index(i))
				}
			}
			dst.Set(s)
		}
	case reflect.Struct:
		dst.Set(src)
		t := src.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && shares(f.Type) {
				copyValue(dst.Field(i), src.Field(i))
			}
		}
	default:
		dst.Set(src)
	}
}

var sharesCache sync.Map // reflect.Type -> bool

// shares reports whether a plain copy of a t would share memory with the original through
// its exported fields (unexported ones, such as a time.Time's immutable location, are copied
// as they are).
func shares(t reflect.Type) bool {
	if v, ok := sharesCache.Load(t); ok {
		return v.(bool)
	}
	var s bool
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		s = true
	case reflect.Array:
		s = shares(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && shares(f.Type) {
				s = true
			}
		}
	}
	sharesCache.Store(t, s)
	return s
}
