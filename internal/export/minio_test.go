package export_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/export"
	"github.com/cairnlog/cairn/internal/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// TestExportFromMinIO exports the forked workload from a real MinIO:
// the same trajectories as from a local directory, and a Parquet file
// hyparquet reads.
func TestExportFromMinIO(t *testing.T) {
	b := s3test.StartMinIO(t)
	st, err := minio.Open(context.Background(), b.Name, "ws", minio.Options{
		Endpoint: b.Host, Region: b.Region, AccessKey: b.AccessKey, SecretKey: b.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	ws := cairn.OpenStore(st)
	fillForked(t, ws)
	_, sum, heads := run(t, ws, export.Options{Format: export.OpenAIJSONL})
	// c, a leaf holding only a user message, is skipped: OpenAI's format
	// refuses an example without an assistant message (TestOpenAIJSONL).
	if got := headNames(heads); len(got) != 4 || sum.Steps != 17 || skippedNames(sum)["c"] == "" {
		t.Fatalf("exported %v, summary %+v; want 4 leaves, 17 steps, c skipped", got, sum)
	}
	_, sum, _ = run(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 2 {
		t.Fatalf("preference summary %+v, want 2 pairs", sum)
	}
	file := filepath.Join(t.TempDir(), "steps.parquet")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.Export(context.Background(), ws, f, export.Options{Format: export.Parquet, Branches: export.All}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if rows, _, _ := readParquet(t, file); len(rows) != 21+3 {
		t.Fatalf("%d rows, want 24 (21 + b's own 3)", len(rows))
	}
}
