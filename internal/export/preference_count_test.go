package export_test

import (
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferenceCountsSessionsLookedAt: a preference export's
// sessions_scanned counted only the sessions of fork groups — 0 in a
// store without forks, though every session was read for its fork
// origin — and counted every group member whatever --session said. It
// counts the sessions the export examined: those --session selects
// (every one without it), each once, as the other formats do.
func TestPreferenceCountsSessionsLookedAt(t *testing.T) {
	ws := emptyStore(t)
	commitRecords(t, ws, "x", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"outcome":"success"}`)
	commitRecords(t, ws, "y", `{"messages":[{"role":"user","content":"q"}]}`)
	if _, sum, _ := run(t, ws, export.Options{Format: export.Preference}); sum.Sessions != 2 {
		t.Errorf("no forks: %d sessions looked at, want 2", sum.Sessions)
	}

	ws, _ = forkedWorkload(t) // a, a-alt, a-alt2, b, b-next, c
	for _, c := range []struct {
		sessions []string
		want     int
	}{{nil, 6}, {[]string{"a*"}, 3}, {[]string{"b-next"}, 1}, {[]string{"nomatch"}, 0}} {
		for _, f := range []string{export.Preference, export.OpenAIJSONL, export.Parquet} {
			var sum export.Summary
			if f == export.Parquet {
				var err error
				if sum, err = export.Export(t.Context(), ws, discard{}, export.Options{Format: f, Sessions: c.sessions}); err != nil {
					t.Fatal(err)
				}
			} else {
				_, sum, _ = run(t, ws, export.Options{Format: f, Sessions: c.sessions})
			}
			if sum.Sessions != c.want {
				t.Errorf("%s --session %v: %d sessions looked at, want %d", f, c.sessions, sum.Sessions, c.want)
			}
		}
	}
}

// discard is io.Discard as a distinct type, for Parquet output.
type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
