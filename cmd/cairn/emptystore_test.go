package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyStoreFlagRefused: --store with an empty value (--store "$S"
// with S unset) was taken as no --store at all, so cairn commit wrote to
// $CAIRN_STORE or the default store, exit 0, not the store the user
// meant to name. An empty --store is a bad value (exit 2), nothing
// written, before or after the command.
func TestEmptyStoreFlagRefused(t *testing.T) {
	def := t.TempDir()
	t.Setenv("CAIRN_STORE", def)
	for _, args := range [][]string{
		{"--store", "", "commit", "s", "-"},
		{"--store=", "commit", "s", "-"},
		{"commit", "s", "-", "--store", ""},
		{"commit", "--store=", "s", "-"},
		{"sessions", "--store", ""},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(`{}`), &out, &errb)
		if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "store: give a store URL") {
			t.Errorf("cairn %q: exit %d, out %q, err %q; want exit 2 refusing the empty --store", args, code, out.String(), errb.String())
		}
	}
	if entries, _ := os.ReadDir(def); len(entries) != 0 {
		t.Errorf("$CAIRN_STORE %s was written: %v", filepath.Base(def), entries)
	}
}
