package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestQueryNumbersInDecimal: the numbers of a query string are written
// in decimal digits, as step numbers are ("+1", "0x1" and "1_0" are no
// step): limit took a sign ("+5"), read by Atoi, and timeout took
// whatever strconv.ParseFloat does, a sign, hex floats ("0x1p3": 8 s) and
// underscores ("1_0": 10 s). Each is a 400 now; a fraction and an
// exponent still serve.
func TestQueryNumbersInDecimal(t *testing.T) {
	ws := cairn.OpenStore(memStore())
	s, _ := ws.Session("s")
	if _, err := s.Commit(t.Context(), cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	srv := New(ws, Options{})
	for _, tc := range []struct {
		path, value string
		status      int
	}{
		{"/v1/sessions/s/log?limit=", "+5", http.StatusBadRequest},
		{"/v1/sessions/s/log?limit=", "5", http.StatusOK},
		{"/v1/sessions/s/wait?after=0&timeout=", "+0", http.StatusBadRequest},
		{"/v1/sessions/s/wait?after=0&timeout=", "-0", http.StatusBadRequest},
		{"/v1/sessions/s/wait?after=0&timeout=", "0x0p0", http.StatusBadRequest},
		{"/v1/sessions/s/wait?after=0&timeout=", "0_0", http.StatusBadRequest},
		{"/v1/sessions/s/wait?after=0&timeout=", "infinity", http.StatusBadRequest},
		{"/v1/sessions/s/wait?after=0&timeout=", "0", http.StatusOK},
		{"/v1/sessions/s/wait?after=0&timeout=", "0.5", http.StatusOK},
		{"/v1/sessions/s/wait?after=0&timeout=", ".5", http.StatusOK},
		{"/v1/sessions/s/wait?after=0&timeout=", "1e-3", http.StatusOK},
		{"/v1/sessions/s/wait?after=0&timeout=", "30E+0", http.StatusOK},
	} {
		rec := get(srv, tc.path+url.QueryEscape(tc.value))
		if rec.Code != tc.status {
			t.Errorf("%s%s: %d %s; want %d", tc.path, tc.value, rec.Code, rec.Body, tc.status)
		}
		if tc.status == http.StatusBadRequest && !strings.Contains(rec.Body.String(), tc.value) {
			t.Errorf("%s%s: %s; want the value named", tc.path, tc.value, rec.Body)
		}
	}
}
