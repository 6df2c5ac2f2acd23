package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestLongValuesNotEchoed: a request carrying a value of 60,000
// characters where a step number, a query parameter, a route or a field
// name belongs was refused with the value echoed whole, an error of
// 60 KB (an agent reads its errors into its context). Each is shown by
// its start and its length, as a long session name or key is.
func TestLongValuesNotEchoed(t *testing.T) {
	c, _ := newChecker(t, Options{MaxBody: 1 << 20})
	long := strings.Repeat("a", 60_000)
	for _, tc := range []struct {
		method, path, body string
		status             int
		hdr                http.Header
	}{
		{"GET", "/v1/sessions/s/steps/" + long, "", 400, nil},
		{"GET", "/v1/sessions/s/head?state=" + long, "", 400, nil},
		{"GET", "/v1/sessions/s/log?limit=" + long, "", 400, nil},
		{"GET", "/v1/sessions/s/log?from=" + long, "", 400, nil},
		{"GET", "/v1/sessions/s/wait?after=" + long, "", 400, nil},
		{"GET", "/v1/sessions/s/wait?after=0&timeout=" + long, "", 400, nil},
		{"GET", "/v1/diff?b=s&a=s@" + long, "", 400, nil},
		{"GET", "/v1/x/" + long, "", 404, nil},
		{"PUT", "/v1/sessions/" + long + "/steps", "", 405, nil},
		{"GET", "/v1/sessions/s/head?%zz" + long, "", 400, nil},
		{"POST", "/v1/sessions/s/steps", `{"state":1,"status":"` + long + `"}`, 400, nil},
		{"POST", "/v1/sessions/s/steps", `{"state":1,"` + long + `":1}`, 400, nil},
		{"POST", "/v1/sessions/s/steps", `{"state":1}`, 415, http.Header{"Content-Type": {"application/" + long}}},
		{"POST", "/v1/sessions/s/steps", `{"state":1}`, 415, http.Header{"Content-Type": {"application/json; charset=" + long}}},
		{"POST", "/v1/sessions/s/steps", `{"state":1}`, 415, http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {long}}},
		{"POST", "/v1/sessions/s/steps", `{"state":1}`, 403, http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {long}}},
		{"POST", "/v1/sessions/s/steps", `{"state":1}`, 403, http.Header{"Content-Type": {"application/json"}, "Origin": {"http://" + long}}},
	} {
		hdr := tc.hdr
		if hdr == nil {
			hdr = http.Header{"Content-Type": {"application/json"}}
		}
		status, b, _ := c.send(tc.method, tc.path, tc.body, hdr, "")
		var e errorBody
		if status != tc.status || json.Unmarshal(b, &e) != nil || len(e.Error) > 400 || !strings.Contains(e.Error, "aaaa") {
			t.Errorf("%s %.60s… %.60s: %d, error of %d bytes %.200q; want %d, the value shown by its start", tc.method, tc.path, tc.body, status, len(e.Error), e.Error, tc.status)
		}
	}
}
