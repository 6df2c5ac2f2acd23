package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// FuzzRequestBodies sends arbitrary bodies to every route that reads one:
// the answer is always a described status with a JSON body, never a panic
// or a 500.
func FuzzRequestBodies(f *testing.F) {
	for _, s := range []string{`{"state":{"a":1}}`, `{"state":[1,2],"record":{"q":1},"status":"awaiting_input","expect":0}`,
		`{"to":"x","step":1}`, `{"input":{"ok":true}}`, `{"state":1e400}`, `{"state":"\ud800"}`, `{`, ``, `null`, `{"state":{}}{}`, `{"expect":-1,"state":0}`} {
		f.Add(s)
	}
	ws := cairn.OpenStore(memStore())
	srv := New(ws, Options{MaxBody: 1 << 16})
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/v1/sessions/f/steps", "/v1/sessions/f/fork", "/v1/sessions/f/reply"} {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			req.Host = "127.0.0.1"
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			switch rec.Code {
			case 201, 400, 404, 409, 413:
			default:
				t.Fatalf("POST %s %q: status %d %s", path, body, rec.Code, rec.Body)
			}
			var v map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatalf("POST %s %q: body %q is not a JSON object", path, body, rec.Body)
			}
		}
	})
}
