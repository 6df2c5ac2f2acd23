package jsontext

import (
	"slices"
	"testing"
)

// TestElements: the elements of a JSON array as written, commas and
// brackets inside strings and nested values included.
func TestElements(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`[]`, nil},
		{` [ ] `, nil},
		{`[1]`, []string{`1`}},
		{` [ 1 , "a,]\"[" , {"k":[2,3]}, [[]], null ]`, []string{`1`, `"a,]\"["`, `{"k":[2,3]}`, `[[]]`, `null`}},
		{`{"a":[1,2]}`, nil},
		{`"[1,2]"`, nil},
	} {
		var got []string
		for _, e := range Elements([]byte(c.in)) {
			got = append(got, string(e))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Elements(%s) = %q; want %q", c.in, got, c.want)
		}
	}
}
