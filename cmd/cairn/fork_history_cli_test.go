package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// A fork's history is the fork's: below its fork point, b@N names the
// step at N in b's history, for every command that reads a step, before
// and after the session it was forked from is removed and gc has run.
// The step shows as the step it is (a@2), not as a copy. Before, each
// command refused b@2, naming a@2, which after `rm a` nothing would read.
func TestForkHistoryCLI(t *testing.T) {
	store := t.TempDir()
	for i := 1; i <= 5; i++ {
		if _, errs, code := cli(t, store, `{"i":`+strconv.Itoa(i)+`}`, "commit", "a", "--json", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	if _, errs, code := cli(t, store, "", "fork", "a@3", "b"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, `{"i":9}`, "commit", "b", "--json", "-"); code != 0 {
		t.Fatal(errs)
	}
	reads := func(when string) {
		t.Helper()
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"show", "b@2"}, `{"i":2}` + "\n"},
			{[]string{"show", "b@1", "--record"}, "null\n"},
			{[]string{"diff", "b@1", "b@4"}, "changed  /i\n"},
			{[]string{"log", "b@2"}, "a@2"},
			{[]string{"replay", "b@2", "--from", "2"}, "a@2"},
		} {
			out, errs, code := cli(t, store, "", c.args...)
			if code != 0 || !strings.Contains(out, c.want) {
				t.Errorf("%s: cairn %s: exit %d, %q %q; want %q", when, strings.Join(c.args, " "), code, out, errs, c.want)
			}
		}
		dir := t.TempDir() + "/out"
		out, errs, code := cli(t, store, "", "checkout", "b@1", "--dir", dir)
		if b, _ := os.ReadFile(dir + "/state.json"); code != 0 || string(b) != `{"i":1}`+"\n" || !strings.HasPrefix(out, "a@1 -> ") {
			t.Errorf("%s: cairn checkout b@1: exit %d, %q %q, state %q; want a@1's state", when, code, out, errs, b)
		}
	}
	reads("before rm a")
	if _, errs, code := cli(t, store, "", "rm", "a"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 0 {
		t.Fatal(errs)
	}
	reads("after rm a and gc")

	// A fork of b@2 is a fork of a@2.
	out, errs, code := cli(t, store, "", "fork", "b@2", "c", "--json")
	if code != 0 || !strings.Contains(out, `"session":"c","step":2`) || !strings.Contains(out, `"origin":"a@2"`) {
		t.Fatalf("cairn fork b@2 c: exit %d, %q %q; want c@2, a fork of a@2", code, out, errs)
	}
	if out, errs, code := cli(t, store, "", "show", "c@1"); code != 0 || out != `{"i":1}`+"\n" {
		t.Errorf("cairn show c@1: exit %d, %q %q; want a@1's state", code, out, errs)
	}

	// a's own steps stay removed; the words say where they are read.
	_, errs, code = cli(t, store, "", "show", "a@2")
	noStoreKeys(t, "show a@2", errs)
	if code != 1 || !strings.Contains(errs, "the session was removed") || !strings.Contains(errs, "its history still holds this step, as its step 2") {
		t.Errorf("cairn show a@2 after rm a: exit %d, %q; want exit 1 saying a was removed and a fork's history holds it as its step 2", code, errs)
	}
}
