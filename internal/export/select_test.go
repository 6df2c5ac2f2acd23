package export_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// Selection by outcome and reward. A trajectory's outcome is the newest
// on its path (record.outcome, else labels.outcome), so b-next inherits
// b's success; --label outcome=V means the same as --outcome V.
func TestSelectByOutcomeAndReward(t *testing.T) {
	ws, _ := forkedWorkload(t)
	ctx := context.Background()
	continueRun(ctx, t, ws, "r-low", 1, "", f64(0.2))
	continueRun(ctx, t, ws, "r-high", 1, "pass", f64(0.9))
	cases := []struct {
		name string
		opts export.Options
		want []string
	}{
		{"outcome success", export.Options{Outcome: "success"}, []string{"a-alt", "b-next", "r-high"}},
		{"outcome synonym", export.Options{Outcome: "PASSED"}, []string{"a-alt", "b-next", "r-high"}},
		{"outcome failure", export.Options{Outcome: "failure"}, []string{"a", "a-alt2"}},
		{"label outcome", export.Options{Labels: map[string]string{"outcome": "success"}}, []string{"a-alt", "b-next", "r-high"}},
		{"label outcome and task", export.Options{Labels: map[string]string{"outcome": "success", "task": "t1"}}, []string{"a-alt"}},
		{"min reward", export.Options{MinReward: f64(0.5)}, []string{"r-high"}},
		{"max reward", export.Options{MaxReward: f64(0.5)}, []string{"r-low"}},
		{"reward range", export.Options{MinReward: f64(0.2), MaxReward: f64(0.9)}, []string{"r-high", "r-low"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Format = export.OpenAIJSONL
			_, _, heads := run(t, ws, c.opts)
			if got := headNames(heads); !slices.Equal(got, c.want) {
				t.Fatalf("exported %v, want %v", got, c.want)
			}
		})
	}
	for _, o := range []export.Options{
		{Format: export.ATIF, MinReward: f64(1), MaxReward: f64(0)},
		{Format: export.ATIF, Outcome: "success", Labels: map[string]string{"outcome": "failure"}},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// openai-jsonl and sharegpt lines carry the trajectory's metadata, to
// filter on after the export; NoMetadata leaves it out.
func TestTrajectoryMetadata(t *testing.T) {
	ws, _ := forkedWorkload(t)
	want := map[string]any{
		"session": "a-alt", "head": "a-alt@5", "steps": float64(5), "outcome": "success",
		"labels": map[string]any{"task": "t1"}, "model": "m-1", "forked_from": "a@3",
	}
	for _, format := range []string{export.OpenAIJSONL, export.ShareGPT} {
		out, _, heads := run(t, ws, export.Options{Format: format, Sessions: []string{"a-alt"}})
		meta, _ := lines(t, out)[0]["metadata"].(map[string]any)
		if meta["head_id"] != heads[0].ID {
			t.Fatalf("%s: metadata %v, want head_id %s", format, meta, heads[0].ID)
		}
		delete(meta, "head_id")
		if !reflect.DeepEqual(meta, want) {
			t.Fatalf("%s: metadata\n%v\nwant\n%v", format, meta, want)
		}
		out, _, _ = run(t, ws, export.Options{Format: format, Sessions: []string{"a-alt"}, NoMetadata: true})
		if _, ok := lines(t, out)[0]["metadata"]; ok {
			t.Fatalf("%s: NoMetadata still wrote metadata", format)
		}
	}
	out, _, _ := run(t, ws, export.Options{Format: export.ATIF, Sessions: []string{"a-alt"}})
	extra := lines(t, out)[0]["extra"].(map[string]any)
	if extra["outcome"] != "success" || extra["forked_from"] != "a@3" {
		t.Fatalf("atif extra %v", extra)
	}
}
