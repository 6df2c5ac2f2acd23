package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMembers(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                                    "",
		` {"a":1,"b":[1,{"c":2}],"d":{"e":3}} `: `a=1 b=[1,{"c":2}] d={"e":3}`,
		`{"a\\":"\"","b" : "\\\\" ,"c":"x\\\"y"}`: `a\="\"" b="\\\\" c="x\\\"y"`,
		`{"id":1,"id":null}`:                      "id=1 id=null",
		`{"st\u0061te":true}`:                     "state=true",
		`[{"a":1}]`:                               "",
		`null`:                                    "",
	} {
		var got []string
		for _, m := range Members([]byte(in)) {
			got = append(got, fmt.Sprintf("%s=%s", m.Name, m.Value))
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("Members(%s) = %q, want %q", in, g, want)
		}
	}
}

func TestLoneSurrogate(t *testing.T) {
	for in, want := range map[string]int{
		`"\ud800"`:              1,
		`"ab\udc00"`:            3,
		`"\ud83d\u0041"`:        1,
		`"\ude00\ud83d"`:        1,
		`"\ud83d\ude00"`:        -1,
		`"\uD83D\uDE00 \u00e9"`: -1,
		`"\\ud800"`:             -1,
		`"\\\ud800"`:            3,
		`"\ud83d\ude00\ud800"`:  13,
		`{"a":"\n\"\\"}`:        -1,
	} {
		if got, _ := LoneSurrogate([]byte(in)); got != want {
			t.Errorf("LoneSurrogate(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestDeeper(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want int
	}{
		{`1`, 0, -1},
		{`[]`, 0, 0},
		{`[]`, 1, -1},
		{`{"a":[{}]}`, 2, 6},
		{`{"a":[{}]}`, 3, -1},
		{`["[[[", "\"[[", {}]`, 1, 16},
		{`"\\"[`, 0, 4},
		{`[[[`, 2, 2},
		{`]]][`, 0, 3},
	} {
		if got := Deeper([]byte(c.in), c.max); got != c.want {
			t.Errorf("Deeper(%s, %d) = %d, want %d", c.in, c.max, got, c.want)
		}
	}
}

// FuzzDeeper: on valid JSON, Deeper finds a bracket past limit exactly
// when encoding/json's tokens nest deeper than limit.
func FuzzDeeper(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"[{"}]}`, `[[["\"]"]]]`, `"x"`, `{}`} {
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		if !json.Valid(b) || limit < 0 || limit > 64 {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		d, deepest := 0, 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch tok {
			case json.Delim('['), json.Delim('{'):
				d++
				deepest = max(deepest, d)
			case json.Delim(']'), json.Delim('}'):
				d--
			}
		}
		if got := Deeper(b, limit); (got >= 0) != (deepest > limit) {
			t.Fatalf("Deeper(%s, %d) = %d; the text nests %d deep", b, limit, got, deepest)
		}
	})
}

// FuzzSyntaxWords: whatever the text, the words for its syntax error
// come without a panic, and name no byte beyond ASCII as Latin-1 does.
func FuzzSyntaxWords(f *testing.F) {
	for _, s := range []string{"\ufeff{}", "{\u201ca\u201d:1}", "{\"a\":\xff}", `{"a":1,}`, "\xe2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v json.RawMessage
		var se *json.SyntaxError
		if err := json.Unmarshal(b, &v); !errors.As(err, &se) {
			return
		}
		words := SyntaxWords(se, b)
		if words == "" {
			t.Fatalf("no words for %q", b)
		}
		if at := int(se.Offset) - 1; at >= 0 && at < len(b) && b[at] >= 0x80 && strings.Contains(words, "'"+string(rune(b[at]))+"'") {
			if r, _ := utf8.DecodeRune(b[at:]); r != rune(b[at]) {
				t.Fatalf("SyntaxWords(%q) = %q: names byte 0x%02x as Latin-1", b, words, b[at])
			}
		}
	})
}

func TestDecimal(t *testing.T) {
	for _, s := range []string{"0", "30", "0.5", ".5", "5.", "1e-3", "30E+0", "1.5e10"} {
		if !Decimal(s) {
			t.Errorf("Decimal(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"", ".", "+5", "-5", "1_0", "0x1p1", "inf", "NaN", "1e", "1e+", "e5", "1.2.3", "1e5e3", " 1"} {
		if Decimal(s) {
			t.Errorf("Decimal(%q) = true, want false", s)
		}
	}
}

// TestIJSON: what is valid JSON but no I-JSON is found wherever it is,
// numbers in strings and names are not numbers, and a string is read
// as the JSON text it holds.
func TestIJSON(t *testing.T) {
	for _, c := range []struct {
		in, want string // want: a word of the error, "" for none
	}{
		{`{"a":[1,-0,1e-400,1.7976931348623157e308,123456789012345678901234567890]}`, ""},
		{`{"1e400":"1e400","\ud83d\ude00":"\\ud800"}`, ""},
		{`[1,{"a":[2e308]}]`, "2e308"},
		{`-1E+400`, "-1E+400"},
		{`{"a":"x\udc00"}`, `\udc00`},
		{`"{\"a\":1e400}"`, "1e400"},
		{`"{\"a\":\"\\ud800\"}"`, `\ud800`},
		{`"not json 1e400"`, ""},
		{`{"a":{"b":1,"c":[{"b":2}]},"b":{"a":1}}`, ""},
		{`[{"a":1},{"a":2}]`, ""},
		{`{"a":{"b":1,"c":2,"b":3}}`, `"b" twice`},
		{`{"a":1,"\u0061":2}`, `"a" twice`},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"kg":16,"kh":17,"k3":18}`, `"k3" twice`},
		{`"{\"a\":1,\"a\":2}"`, `"a" twice`},
	} {
		err := IJSON([]byte(c.in))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("IJSON(%s) = %v, want %q", c.in, err, c.want)
		}
	}
}

// TestIJSONOfOtherText: text that is not JSON (a Go program's
// json.RawMessage) neither panics nor is said to hold a huge number.
func TestIJSONOfOtherText(t *testing.T) {
	for _, in := range []string{`"`, `{"`, `{"a`, `{"a":"`, `{"a":--}`, `-`, `{"a":1e}`, `[1.e5`, `{"a\`} {
		if err := IJSON([]byte(in)); err != nil && strings.Contains(err.Error(), "too large") {
			t.Errorf("IJSON(%s) = %v", in, err)
		}
		DuplicateName([]byte(in))
	}
}
