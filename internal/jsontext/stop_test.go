package jsontext

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestStopReader: valid JSON text is read whole, whatever it holds in
// its strings; a read stops after the first byte no JSON text may hold
// where it stands, read a byte at a time so the stop is exact.
func TestStopReader(t *testing.T) {
	for _, doc := range []string{
		`{"a":[1,-2.5e+10,true,false,null],"b":"x\"y\\","c":"é ☃ \u0000"}`,
		" \t\r\n[ {} , [] ]\n",
		`"a string with {}[],: and \" and \\"`,
	} {
		b, err := io.ReadAll(&StopReader{R: iotest.OneByteReader(strings.NewReader(doc))})
		if err != nil || string(b) != doc {
			t.Errorf("read %q as %q, %v", doc, b, err)
		}
	}
	for in, want := range map[string]string{
		"\x00\x00\x00":         "\x00",
		`{"a":1}` + "#rest":    `{"a":1}#`,
		"{\"a\":\"x\ny\"}more": "{\"a\":\"x\n",
		`{"a":"x\"` + "\x01z":  `{"a":"x\"` + "\x01",
		"yes\ny\n":             "y",
		"\xef\xbb\xbf{}":       "\xef",
	} {
		b, err := io.ReadAll(&StopReader{R: iotest.OneByteReader(strings.NewReader(in))})
		if err != nil || string(b) != want {
			t.Errorf("read %q as %q, %v; want %q", in, b, err, want)
		}
	}
}
