package main

import (
	"strings"
	"testing"
)

// TestUnknownCommandSuggests: a command name one or two slips from one
// cairn has says which; it said only "see cairn help". A swap of two
// letters is one slip.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"comit"}, `cairn: unknown command "comit" (did you mean commit? see cairn help)` + "\n"},
		{[]string{"sesions"}, `cairn: unknown command "sesions" (did you mean sessions? see cairn help)` + "\n"},
		{[]string{"help", "chekout"}, `cairn help: unknown command "chekout" (did you mean checkout? see cairn help)` + "\n"},
		// Two letters swapped are one slip: "lgo" was two from log and
		// from gc alike, and got no guess.
		{[]string{"lgo"}, `cairn: unknown command "lgo" (did you mean log? see cairn help)` + "\n"},
		{[]string{"sohw"}, `cairn: unknown command "sohw" (did you mean show? see cairn help)` + "\n"},
		{[]string{"blah"}, `cairn: unknown command "blah" (see cairn help)` + "\n"},
		{[]string{"frob"}, `cairn: unknown command "frob" (did you mean fork? see cairn help)` + "\n"}, // fr-ob: a swap and a slip
		{[]string{"rn"}, `cairn: unknown command "rn" (see cairn help)` + "\n"},                        // rm or run: no guess
	} {
		_, errs, code := cli(t, t.TempDir(), "", c.args...)
		if code != 2 || errs != c.want {
			t.Errorf("cairn %s: exit %d, %q; want 2, %q", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
}
