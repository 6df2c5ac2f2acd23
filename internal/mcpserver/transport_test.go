package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestFilterLines: valid messages pass through byte for byte, one a
// line; every other line gets one JSON-RPC error on the error side (with
// the line's id when it has a usable one), and a line over MaxMessage is
// dropped without being held whole (its error carries its id when the
// line starts with it).
func TestFilterLines(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	input := strings.Join([]string{
		good, "", "not json", `{"jsonrpc":"2.0","id":"a7","method":7}`, "[]",
		`{"jsonrpc":"2.0","id":2,"method":"x","params":{"s":"` + strings.Repeat("y", MaxMessage) + `"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}, "\n")
	var passed, errs bytes.Buffer
	if err := filterLines(strings.NewReader(input), &passed, &errs, nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := good + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"; passed.String() != want {
		t.Fatalf("passed %q, want %q", passed.String(), want)
	}
	lines := strings.Split(strings.TrimSuffix(errs.String(), "\n"), "\n")
	wantIDs := []string{"null", `"a7"`, "null", "2"}
	if len(lines) != len(wantIDs) {
		t.Fatalf("error replies %q, want %d", lines, len(wantIDs))
	}
	for i, l := range lines {
		var r struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.JSONRPC != "2.0" || string(r.ID) != wantIDs[i] || r.Error.Code == 0 || r.Error.Message == "" {
			t.Errorf("error reply %d = %s (%v), want id %s", i, l, err, wantIDs[i])
		}
	}
}
