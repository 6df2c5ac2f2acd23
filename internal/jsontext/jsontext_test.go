package jsontext

import (
	"fmt"
	"strings"
	"testing"
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
