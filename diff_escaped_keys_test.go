package cairn_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestDiffEscapedKeys: Diff names members by JSON pointer, so a key
// written with escapes ("x\/y", a surrogate pair) is named by what it
// decodes to, as a patch path names it. Such keys used to come out as
// their raw text in quotes (`/"x\~1y"`), a path no patch or reader
// takes; and a key spelt differently on each side ("\u0061", "a") read
// as one member removed and another added under the same path.
func TestDiffEscapedKeys(t *testing.T) {
	ctx := context.Background()
	for _, size := range []string{"small", "large"} {
		t.Run(size, func(t *testing.T) {
			ws, err := cairn.Open(ctx, "mem://")
			if err != nil {
				t.Fatal(err)
			}
			filler := ""
			if size == "large" {
				// Large enough to be stored as a tree of nodes.
				filler = `,"filler":[` + strings.Repeat(`"some text to fill the document",`, 20000) + `0]`
			}
			s, _ := ws.Session("s")
			a := stepOf(t, s, cairn.JSON([]byte(`{"x\/y":1,"\ud83d\ude00":1,"\u0061":1,"k":1`+filler+`}`)))
			b := stepOf(t, s, cairn.JSON([]byte(`{"x\/y":2,"\ud83d\ude00":2,"a":1,"k":1`+filler+`}`)))
			changes, err := ws.Diff(ctx, a, b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range changes {
				got = append(got, fmt.Sprintf("%s %s", c.Path, c.Kind))
			}
			sort.Strings(got)
			want := []string{"/x~1y changed", "/\U0001F600 changed"}
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("diff = %q, want %q", got, want)
			}
		})
	}
}
