package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// corruptFixture builds a store with every kind of object: step objects
// (manifest section, tree nodes, data blobs), compacted packs of two
// levels, a head hint and session markers, including a fork. It returns
// the store and every step's state, by "session@n".
func corruptFixture(t *testing.T) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	store := t.TempDir()
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetCompactionFanout(3)
	states := map[string]string{}
	s, _ := ws.Session("a")
	var msgs []string
	var forkAt *cairn.Step
	for n := 1; n <= 33; n++ { // past manifest.HintEvery, so a hint exists
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"message %d %s"}`, n, strings.Repeat("ab", 40+n)))
		doc := `{"messages":[` + strings.Join(msgs, ",") + `]}`
		st, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		states[fmt.Sprintf("a@%d", n)] = doc
		if n == 10 {
			forkAt = st
		}
	}
	if _, err := ws.Fork(ctx, forkAt, "b"); err != nil {
		t.Fatal(err)
	}
	states["b@10"] = states["a@10"]
	b, _ := ws.Session("b")
	doc := `{"forked":true}`
	if _, err := b.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	states["b@11"] = doc
	return store, states
}

// damage is one way of corrupting an object; it returns a description.
type damage struct {
	name string
	do   func(t *testing.T, path string, orig []byte)
}

var damages = []damage{
	{"flip", func(t *testing.T, p string, orig []byte) {
		bad := append([]byte(nil), orig...)
		bad[len(bad)/2] ^= 0x40
		writeFile(t, p, bad)
	}},
	{"truncate", func(t *testing.T, p string, orig []byte) { writeFile(t, p, orig[:len(orig)/2]) }},
	{"delete", func(t *testing.T, p string, orig []byte) {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}},
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptEveryObject flips a byte in, truncates and deletes every
// stored object in turn, and checks that (1) every read either returns
// the state that was committed or fails with an error naming the
// damaged object in words (never a panic, never wrong data), (2) reads that need
// the object do fail, and (3) `cairn verify` exits 1 naming it. Head
// hints and markers are only hints: damaging them must not change any
// read, and verify reports them too (a deleted hint is fine: short
// sessions have none).
func TestCorruptEveryObject(t *testing.T) {
	store, states := corruptFixture(t)
	var keys []string
	filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && !strings.Contains(p, "/.tmp/") {
			rel, _ := filepath.Rel(store, p)
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	if out, errs, code := cli(t, store, "", "verify"); code != 0 {
		t.Fatalf("verify of the intact store: exit %d %s %s", code, out, errs)
	}
	heads := map[string]bool{"steps/a/00000000000000000033": true, "steps/b/00000000000000000011": true}
	kinds := map[string]int{}
	detected := 0
	for _, key := range keys {
		kind := objectKind(t, store, key)
		kinds[kind]++
		path := filepath.Join(store, filepath.FromSlash(key))
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range damages {
			d.do(t, path, orig)
			// Undetectable by design, and harmless to every other step:
			// a missing or shortened hint is an older hint; and a
			// session's newest step, once deleted, looks as if it was
			// never written, since nothing refers to a head (docs/limits.md).
			undetectable := (kind == "hint" && d.name != "flip") || (d.name == "delete" && heads[key])
			failed := checkReads(t, store, states, manifest.DescribeKey(key), kind+" "+d.name, d.name == "delete" && heads[key])
			if failed == 0 && (kind == "step" || kind == "pack") {
				t.Errorf("%s %s: no read failed", d.name, key)
			}
			out, errs, code := cli(t, store, "", "verify")
			switch {
			case undetectable:
				if code != 0 {
					t.Errorf("verify with %s deleted: exit %d: %s %s", key, code, out, errs)
				}
			case code != 1 || !strings.Contains(out, "(object "+key+")"):
				t.Errorf("verify with %s %s: exit %d, output does not name it:\n%s%s", key, d.name, code, out, errs)
			default:
				detected++
			}
			writeFile(t, path, orig)
		}
	}
	// Blobs and nodes re-hash on every read even if an object's checksum
	// were right: damage one blob and one node per object with a valid
	// trailer, so only the blob's own hash can tell.
	for _, key := range keys {
		if k := objectKind(t, store, key); k != "step" && k != "pack" {
			continue
		}
		path := filepath.Join(store, filepath.FromSlash(key))
		orig, _ := os.ReadFile(path)
		obj, err := pack.Parse(orig, key)
		if err != nil {
			t.Fatal(err)
		}
		done := map[string]bool{}
		for _, e := range obj.Entries {
			raw, _ := obj.Blob(e)
			what := "blob"
			if _, err := tree.DecodeNode(raw, ""); err == nil {
				what = "node"
			}
			if done[what] {
				continue
			}
			done[what] = true
			kinds[what]++
			bad := append([]byte(nil), orig...)
			bad[e.Offset+e.StoredLen-1] ^= 0x01
			body := bad[:len(bad)-cas.IDSize]
			sum := cas.Sum(body)
			copy(bad[len(body):], sum[:])
			writeFile(t, path, bad)
			name := fmt.Sprintf("%s %s in %s", what, e.ID.Short(), key)
			if failed := checkReads(t, store, states, e.ID.Short(), name, false); failed == 0 {
				t.Errorf("%s damaged under a valid trailer: no read failed", name)
			}
			out, _, code := cli(t, store, "", "verify")
			if code != 1 || !strings.Contains(out, "(object "+key+")") || !strings.Contains(out, e.ID.Short()) {
				t.Errorf("verify with %s damaged: exit %d, output does not name it:\n%s", name, code, out)
			} else {
				detected++
			}
			writeFile(t, path, orig)
		}
	}
	t.Logf("objects by kind: %v; %d damaged objects detected and named by verify", kinds, detected)
	for _, k := range []string{"step", "pack", "hint", "marker", "node", "blob"} {
		if kinds[k] == 0 {
			t.Errorf("the fixture has no %s to damage", k)
		}
	}
}

// objectKind says what the object at key of the local store is: a step
// object whose commit merged a pack into it counts as a pack (manifest
// format 5), as does a pack object of an older version.
func objectKind(t *testing.T, store, key string) string {
	switch {
	case strings.HasPrefix(key, "packs/"):
		return "pack"
	case strings.HasPrefix(key, "sessions/"):
		return "marker"
	case strings.HasSuffix(key, "/head"):
		return "hint"
	}
	b, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := pack.Parse(b, key)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Decode(obj.Manifest, key)
	if err != nil {
		t.Fatal(err)
	}
	if m.Copies > 0 {
		return "pack"
	}
	return "step"
}

// checkReads reads every step's state through a fresh workspace. A read
// must give back exactly what was committed, or fail naming what (the
// damaged object in words, as manifest.DescribeKey says it, or a blob id). If newestGone, what is a session's
// newest step object, deleted: nothing refers to it, so reading that
// step is "not found" past the session's head, as for a step never
// written (said in steps, not keys: issue 15 item 6). It returns how
// many reads failed.
func checkReads(t *testing.T, store string, states map[string]string, what, label string, newestGone bool) int {
	t.Helper()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for ref, want := range states {
		st, err := ws.Resolve(ctx, ref)
		var got []byte
		if err == nil {
			got, err = st.JSON(ctx)
		}
		if err != nil {
			failed++
			if newestGone && errors.Is(err, cairn.ErrNotFound) && strings.Contains(err.Error(), "the session's head is step") {
				continue
			}
			// A lost step read by its own reference says it once, in
			// the reference's words: "step a@3 not found: the store has lost
			// it".
			if !strings.Contains(err.Error(), what) && (what != "session "+strings.Replace(ref, "@", ", step ", 1) ||
				err.Error() != "step "+ref+" not found: the store has lost it (cairn verify lists what is missing)") {
				t.Errorf("%s: reading %s failed with %q, which does not name %s", label, ref, err, what)
			}
			continue
		}
		if string(got) != want {
			t.Errorf("%s: reading %s gave wrong data", label, ref)
		}
	}
	return failed
}
