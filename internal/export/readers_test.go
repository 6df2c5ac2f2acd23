package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// parquetFile exports the forked workload and every record shape as
// Parquet (all branches) and returns the file and the summary.
func parquetFile(t *testing.T) (string, export.Summary) {
	t.Helper()
	ws, dir := forkedWorkload(t)
	fillShapes(t, ws)
	file := filepath.Join(dir, "steps.parquet")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := export.Export(context.Background(), ws, f, export.Options{Format: export.Parquet, Branches: export.All})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return file, sum
}

// node runs a reader script of testdata and decodes its JSON output.
func node(t *testing.T, module string, out any, args ...string) {
	t.Helper()
	bin, entry := nodeModule(t, module)
	cmd := exec.Command(bin, append([]string{args[0], entry}, args[1:]...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", module, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s output: %v: %.300s", module, err, b)
	}
}

// The Parquet export is written as every common reader reads it —
// version 1 data pages, PLAIN, RLE and RLE_DICTIONARY encodings only —
// and three independent readers read it whole: hyparquet, DuckDB (SQL)
// and @dsnp/parquetjs, which refused DELTA_LENGTH_BYTE_ARRAY.
func TestParquetReadByEveryReader(t *testing.T) {
	file, sum := parquetFile(t)
	ids := func(rows []map[string]any) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r["id"].(string))
		}
		return out
	}

	rows, _, _, chunks := readParquetChunks(t, file)
	if int64(len(rows)) != sum.Steps || len(chunks) == 0 {
		t.Fatalf("hyparquet: %d rows, %d column chunks; summary says %d steps", len(rows), len(chunks), sum.Steps)
	}
	encodings := []string{"PLAIN", "RLE", "RLE_DICTIONARY", "PLAIN_DICTIONARY"}
	for _, c := range chunks {
		if len(c.PageTypes) == 0 {
			t.Fatalf("column %s: no encoding_stats to check the page types by", c.Column)
		}
		for _, p := range c.PageTypes {
			if p != "DATA_PAGE" && p != "DICTIONARY_PAGE" {
				t.Errorf("column %s: a %s page; want version 1 data pages", c.Column, p)
			}
		}
		for _, e := range c.Encodings {
			if !slices.Contains(encodings, e) {
				t.Errorf("column %s: encoding %s; want only %v", c.Column, e, encodings)
			}
		}
	}

	var pj struct {
		NumRows int              `json:"num_rows"`
		Rows    []map[string]any `json:"rows"`
	}
	node(t, "@dsnp/parquetjs/dist/parquet.js", &pj, "testdata/parquetjs.mjs", file)
	if int64(pj.NumRows) != sum.Steps || !slices.Equal(ids(pj.Rows), ids(rows)) {
		t.Fatalf("parquetjs: %d rows (metadata %d), ids differ from hyparquet's: %v", len(pj.Rows), pj.NumRows, slices.Equal(ids(pj.Rows), ids(rows)))
	}

	var res [][]map[string]any
	node(t, "@duckdb/node-api/lib/index.js", &res, "testdata/duckdb.mjs", file,
		`SELECT count(*) AS n, count(DISTINCT trajectory) AS t FROM FILE`,
		`SELECT messages, tool_calls FROM FILE WHERE trajectory = 'parallel' AND step = 2`,
		`SELECT count(DISTINCT trajectory) AS n FROM FILE WHERE trajectory_outcome = 'success'`,
		`SELECT cardinality(labels) AS n, conventional FROM FILE WHERE trajectory = 'a' AND position = 1`,
		`SELECT count(*) AS n FROM FILE WHERE trajectory = 'broken' AND NOT conventional AND record LIKE '%"bot"%'`,
		`SELECT count(*) AS n FROM FILE WHERE trajectory = 'reasoning' AND messages LIKE '%"reasoning":"look first"%' AND messages LIKE '%"reasoning":"x means a"%'`,
		`SELECT content FROM FILE WHERE trajectory = 'unicode'`,
	)
	num := func(v any) int64 {
		switch v := v.(type) {
		case string:
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		case float64:
			return int64(v)
		}
		return -1
	}
	if len(res) != 7 || num(res[0][0]["n"]) != sum.Steps || num(res[0][0]["t"]) != sum.Trajectories {
		t.Fatalf("duckdb: count %v; summary %d steps, %d trajectories", res, sum.Steps, sum.Trajectories)
	}
	var msgs, calls []map[string]any
	if len(res[1]) != 1 || json.Unmarshal([]byte(res[1][0]["messages"].(string)), &msgs) != nil || len(msgs) != 3 ||
		json.Unmarshal([]byte(res[1][0]["tool_calls"].(string)), &calls) != nil || len(calls) != 2 {
		t.Fatalf("duckdb: parallel@2 row %v", res[1])
	}
	// a-alt, b and b-next end in success (b-next inherits b's).
	if num(res[2][0]["n"]) != 3 || num(res[3][0]["n"]) != 1 || res[3][0]["conventional"] != true || num(res[4][0]["n"]) != 1 {
		t.Fatalf("duckdb: %v %v %v", res[2], res[3], res[4])
	}
	// Reasoning, in both spellings, kept in messages; hostile unicode
	// read back as written.
	if num(res[5][0]["n"]) != 1 || len(res[6]) != 1 || res[6][0]["content"] != `</script> & "q" 日本` {
		t.Fatalf("duckdb: reasoning %v, unicode %v", res[5], res[6])
	}
}
