package export_test

import (
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestATIFMetricsAddUpToFinalMetrics: ATIF's final_metrics totals are
// the sums of its steps' metrics. Tokens and cost of a step without an
// assistant message (usage recorded with the tool's result, or before
// the first answer) were counted in final_metrics but on no step, so
// the two disagreed and a per-step reader lost them. They go to the
// nearest agent step before them (the model call they were spent on
// came before the record), or the first one after if none came before;
// metrics stay on agent steps only, as ATIF wants.
func TestATIFMetricsAddUpToFinalMetrics(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "s",
		`{"messages":[{"role":"user","content":"q"}],"tokens":{"prompt":5,"completion":1},"cost_usd":0.001}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"read","arguments":{}}]}],"tokens":{"prompt":100,"completion":10,"cached":40},"cost_usd":0.01}`,
		`{"messages":[{"role":"tool","tool_call_id":"c1","content":"text"}],"tokens":{"prompt":200,"completion":20,"cached":50},"cost_usd":0.02}`,
		`{"tokens":{"prompt":1000,"completion":100}}`,
		`{"messages":[{"role":"assistant","content":"done"}]}`)
	fork(t.Context(), t, ws, "s@3", "s-alt")
	commitRecords(t, ws, "s-alt", `{"messages":[{"role":"assistant","content":"other"}],"tokens":{"prompt":7,"completion":3}}`)
	out, _, _ := runLong(t, ws, export.Options{Format: export.ATIF, Branches: export.All})
	want := map[string][4]float64{ // prompt, completion, cached, cost
		"s":     {1305, 131, 90, 0.031},
		"s-alt": {312, 34, 90, 0.031},
	}
	for _, doc := range lines(t, out) {
		name := doc["session_id"].(string)
		var sum [4]float64
		for _, st := range asList(doc["steps"]) {
			st := st.(map[string]any)
			m, ok := st["metrics"].(map[string]any)
			if !ok {
				continue
			}
			if st["source"] != "agent" {
				t.Errorf("%s: metrics on a %v step", name, st["source"])
			}
			for i, k := range []string{"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"} {
				v, _ := m[k].(float64)
				sum[i] += v
			}
		}
		fm := doc["final_metrics"].(map[string]any)
		var final [4]float64
		for i, k := range []string{"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd"} {
			final[i], _ = fm[k].(float64)
		}
		w := want[name]
		for i := range w {
			if !near(sum[i], w[i]) || !near(final[i], w[i]) {
				t.Errorf("%s: steps' metrics add up to %v, final_metrics %v; want %v", name, sum, final, w)
				break
			}
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
