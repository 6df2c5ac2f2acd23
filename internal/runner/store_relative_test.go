package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRunRelativeStore: a run over a store given as a relative path
// (cairn run --store store) told its command CAIRN_STORE=store, which a
// command that changes directory (into $CAIRN_STATE_DIR, say) opens as
// another store there: its `cairn` commits went to another workspace,
// inside the work directory the run empties between starts. The command
// must be given a URL that opens the run's own store from anywhere.
func TestRunRelativeStore(t *testing.T) {
	_, exe := setup(t, "report")
	t.Chdir(t.TempDir())
	ws, err := cairn.Open(t.Context(), "store")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.json")
	t.Setenv("RUNNER_OUT", out)
	s, _ := ws.Session("r")
	if _, err := s.Commit(t.Context(), cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t.Context(), ws, Config{Session: "r", Command: []string{exe}, Dir: filepath.Join(t.TempDir(), "work")}); err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("child report %q: %v", b, err)
	}
	url, _ := rep["store"].(string)
	t.Chdir(t.TempDir()) // where the command might have gone
	other, err := cairn.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if head, err := other.ReadHead(t.Context(), "r"); err != nil || head.Number != 2 {
		t.Errorf("CAIRN_STORE=%s, opened from another directory: head of r %v, %v; want the run's store, at step 2", url, head, err)
	}
}
