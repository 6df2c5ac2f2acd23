package tree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// TestCheckJSONAgreesWithWriteJSON: CheckJSON, which cairn show and
// checkout run so that a state beyond a limit writes nothing, must fail
// exactly where WriteJSON would, on the same limit, for every limit: a
// check that passed what the write then refused would let show write
// part of a state again. It reads the nodes only, not the values.
func TestCheckJSONAgreesWithWriteJSON(t *testing.T) {
	ctx := context.Background()
	deep := `{"x":"` + strings.Repeat("y", 2000) + `"}`
	for i := 0; i < 6; i++ {
		deep = `{"k":` + deep + `,"pad":"` + strings.Repeat("p", 1500) + `"}`
	}
	var items []string
	for i := 0; i < 3000; i++ {
		items = append(items, fmt.Sprintf(`{"i":%d,"text":"%s"}`, i, strings.Repeat("t", i%50)))
	}
	docs := map[string]string{
		"deep":    deep,
		"array":   `{"a":[` + strings.Join(items, ",") + `]}`,
		"chunked": `{"n":1,"s":"` + strings.Repeat("0123456789abcdef", 20000) + `","t":[` + deep + `]}`,
		"inline":  `{"a":1}`,
	}
	for name, doc := range docs {
		m := &blobMap{blobs: map[cas.ID][]byte{}}
		ref, err := BuildJSON([]byte(doc), m)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := (&Reader{Src: m}).JSON(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(whole))
		var limits []Limits
		for d := 1; d <= 12; d++ {
			limits = append(limits, Limits{MaxDepth: d})
		}
		for _, n := range []int64{1, size / 2, size - 1, size} {
			limits = append(limits, Limits{MaxBytes: n}, Limits{MaxTotal: n})
		}
		for _, l := range limits {
			m.reads = 0
			cerr := (&Reader{Src: m, Limits: l}).CheckJSON(ctx, ref)
			checkReads := m.reads
			m.reads = 0
			var out bytes.Buffer
			werr := (&Reader{Src: m, Limits: l}).WriteJSON(ctx, &out, ref)
			var cl, wl *LimitError
			errors.As(cerr, &cl)
			errors.As(werr, &wl)
			switch {
			case (cerr == nil) != (werr == nil):
				t.Errorf("%s, %+v: check %v, write %v", name, l, cerr, werr)
			case werr != nil && (cl == nil || wl == nil || cl.Limit != wl.Limit || cl.What != wl.What):
				t.Errorf("%s, %+v: check %v, write %v: want the same limit error", name, l, cerr, werr)
			case werr == nil && !bytes.Equal(out.Bytes(), whole):
				t.Errorf("%s, %+v: the write wrote other bytes", name, l)
			}
			if checkReads > m.reads {
				t.Errorf("%s, %+v: the check read %d blobs, the write %d", name, l, checkReads, m.reads)
			}
		}
	}
}
