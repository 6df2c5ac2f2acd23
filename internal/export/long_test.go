package export_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// A Parquet export holds a trajectory whole only while it is short; a
// longer one is read twice and written a few rows at a time (long.go).
// The file must not tell: exported holding a step, two, three or five
// at a time, or a run of steps per byte, in row groups of several
// sizes, every store of records below gives the file, summary and heads
// it gives held whole — tool calls without ids (call_<step>_<n>, beside
// an agent's own call_2_1), results without ids whose run spans steps,
// a stray result, arguments of the wrong kind, a record of the wrong
// shape, raw records, labels, outcomes and rewards given and taken back
// across steps, a pruned session, forks — and a re-export from its heads
// too.
func TestLongParquetSameFile(t *testing.T) {
	ctx := context.Background()
	ws, _ := forkedWorkload(t)
	commitRecords(t, ws, "ids",
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":{"x":"a"}},{"id":"","name":"cat","arguments":"{\"x\":\"b\"}"}]},{"role":"tool","content":"a"}]}`,
		`{"messages":[{"role":"tool","tool_call_id":"","content":"b"}],"labels":{"k":"1"}}`,
		`{"messages":[{"role":"tool","content":"stray"},{"role":"assistant","content":"","tool_calls":[{"id":"call_2_1","name":"ls"}]}]}`,
		`{"messages":[{"role":"tool","name":"ls","content":"c"},{"role":"assistant","content":"","tool_calls":[{"name":"ls","arguments":null}]}],"outcome":"failure","reward":0.25}`,
		`{"messages":[{"role":"tool","content":"d"},{"role":"assistant","content":"x","tool_calls":[{"name":"n","arguments":7}]}]}`,
		`{"messages":[{"role":"robot","content":"?"}]}`,
		`{"foo":1}`,
		`"text"`,
		``,
		`{"labels":{"k":"2","outcome":"success"},"reward":1}`,
		`{"outcome":false}`,
		`{"messages":[{"role":"assistant","content":"done"}],"model":"m","tokens":{"prompt":3,"completion":2}}`)
	var long []string
	for i := range 40 {
		long = append(long, fmt.Sprintf(`{"messages":[{"role":"user","content":"q%d"},{"role":"assistant","content":"","tool_calls":[{"name":"run","arguments":{"i":%d}}]},{"role":"tool","content":"r%d"},{"role":"assistant","content":"a%d"}],"labels":{"i":"%d"}}`, i, i, i, i, i%3))
	}
	commitRecords(t, ws, "long", long...)
	commitRecords(t, ws, "pruned", long[:12]...)
	if _, err := ws.Prune(ctx, "pruned", 5); err != nil {
		t.Fatal(err)
	}
	fork(ctx, t, ws, "long@20", "long-fork")
	commitRecords(t, ws, "long-fork", long[30:]...)

	for _, branches := range []string{export.Leaves, export.All} {
		for _, group := range []int{0, 7, 64, 100} {
			opts := export.Options{Format: export.Parquet, Branches: branches}
			restore := export.SetHoldForTest(1<<30, 1<<40, group)
			want, wantSum, wantHeads := run(t, ws, opts)
			restore()
			for _, hold := range []struct {
				steps int
				bytes int64
			}{{1, 1 << 40}, {2, 1 << 40}, {3, 1 << 40}, {5, 1 << 40}, {1 << 30, 1}, {4, 3000}} {
				what := fmt.Sprintf("branches %s, row groups of %d, holding %d steps or %d bytes", branches, group, hold.steps, hold.bytes)
				restore := export.SetHoldForTest(hold.steps, hold.bytes, group)
				got, sum, heads := run(t, ws, opts)
				again, _, _ := run(t, ws, export.Options{Format: export.Parquet, FromHeads: eachHead(heads)})
				restore()
				if !bytes.Equal([]byte(got), []byte(want)) {
					t.Errorf("%s: the file differs from the one written holding each trajectory whole", what)
				}
				if again != want {
					t.Errorf("%s: the re-export from the heads differs", what)
				}
				if !reflect.DeepEqual(sum, wantSum) || !reflect.DeepEqual(heads, wantHeads) {
					t.Errorf("%s: summary %+v, heads %v; held whole: %+v, %v", what, sum, heads, wantSum, wantHeads)
				}
			}
		}
	}
	// The store holds what the test means it to.
	_, sum, _ := run(t, ws, export.Options{Format: export.Parquet})
	notes := fmt.Sprint(sum.LeftOut)
	for _, want := range []string{"pruned", "without a tool_call_id", "wrong shape", "arguments is not"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note says %q: %s", want, notes)
		}
	}
}

// eachHead yields heads, for Options.FromHeads.
func eachHead(heads []export.ManifestHead) func(context.Context, func(export.ManifestHead) error) error {
	return func(_ context.Context, yield func(export.ManifestHead) error) error {
		for _, h := range heads {
			if err := yield(h); err != nil {
				return err
			}
		}
		return nil
	}
}
