package tree

import (
	"context"
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// TestDiffLongStrings: a string long enough to be stored as a list of
// chunks under list nodes ('L') looked like a long array to the diff,
// which then met a chunk node where it wanted array elements and called
// the store corrupt: `cairn diff` and `cairn replay` failed on any two
// states holding a long string that changed, which verify found sound.
func TestDiffLongStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	long := func() string {
		b := make([]byte, 150<<10)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return `"` + base64.StdEncoding.EncodeToString(b) + `"`
	}
	arr := func(n int) string {
		out := "["
		for i := range n {
			if i > 0 {
				out += ","
			}
			out += `{"i":` + string(rune('0'+i%10)) + `,"pad":"` + base64.StdEncoding.EncodeToString(make([]byte, 200)) + `"}`
		}
		return out + "]"
	}
	s1, s2, a := long(), long(), arr(3000)
	for _, c := range []struct {
		name string
		a, b string
		want []string
	}{
		{"string changed", `{"n":1,"s":` + s1 + `}`, `{"n":2,"s":` + s2 + `}`, []string{"changed /n", "changed /s"}},
		{"string became an array", `{"s":` + s1 + `}`, `{"s":` + a + `}`, []string{"changed /s"}},
		{"array became a string", `{"s":` + a + `}`, `{"s":` + s2 + `}`, []string{"changed /s"}},
	} {
		m := &blobMap{blobs: map[cas.ID][]byte{}}
		ra, err := BuildJSON([]byte(c.a), m)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := BuildJSON([]byte(c.b), m)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = (&Reader{Src: m}).DiffJSON(context.Background(), ra, rb, func(ch Change) error {
			got = append(got, string(ch.Kind)+" "+ch.Path)
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: changes %v, want %v", c.name, got, c.want)
		}
	}
}
