package httpapi

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRecordOverItsLimitIs413: a record over the 8 MiB a step record may
// hold (within the body limit, 32 MiB by default) was a 422, a status
// openapi.json does not list for a commit, telling the client to raise
// the server's read limits (CAIRN_MAX_VALUE_BYTES, ...), which bound no
// record. It is a 413 naming the record and its limit, as an input over
// its limit is for a reply.
func TestRecordOverItsLimitIs413(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 16 << 20})
	rec := `{"x":"` + strings.Repeat("a", cairn.MaxRecordBytes) + `"}`
	got := c.do("POST", "/v1/sessions/r/steps", `{"state":{},"record":`+rec+`}`, 413)
	msg, _ := got["error"].(string)
	if !strings.Contains(msg, "record") || strings.Contains(msg, "CAIRN_MAX") {
		t.Errorf("record over its limit: %v; want a message naming the record's limit, not the read limits", got)
	}
	c.do("GET", "/v1/sessions/r/head", "", 404)
	// At the limit it is taken.
	rec = `"` + strings.Repeat("a", cairn.MaxRecordBytes-2) + `"`
	c.do("POST", "/v1/sessions/r/steps", `{"state":{},"record":`+rec+`}`, 201)
}
