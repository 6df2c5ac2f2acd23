package manifest_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

var update = flag.Bool("update", false, "rewrite testdata/manifest.golden and the fuzz seed corpus")

var goldenDir = "testdata"

// full returns a manifest with every field set, at a fixed time.
func full() *manifest.Manifest {
	return &manifest.Manifest{
		Session: "chat-1.fork_A",
		Number:  1234,
		Parent:  &manifest.Pointer{Session: "chat-1.fork_A", Number: 1233, ID: cas.Sum([]byte("parent"))},
		Origin:  &manifest.Pointer{Session: "chat-1", Number: 77, ID: cas.Sum([]byte("origin"))},
		Time:    time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC),
		Status:  manifest.AwaitingInput,
		Writer:  "host-7/pid-4242",
		Record:  []byte(`{"role":"assistant","tokens":{"in":1200,"out":345},"cost":0.0125,"labels":["a","é"]}`),
		Kind:    manifest.StateDir,
		Root:    tree.Ref{Kind: tree.Node, ID: cas.Sum([]byte("root")), Size: 3},
		Layout: manifest.Layout{
			Packs: []manifest.PackRef{{Session: "chat-1", Number: 65, Level: 2}, {Session: "chat-1.fork_A", Number: 1201, Level: 1}},
			Steps: []manifest.Range{{Session: "chat-1", First: 1, Last: 77}, {Session: "chat-1.fork_A", First: 1200, Last: 1233}},
		},
		Truncated: true,
	}
}

// TestGoldenV1 checks that manifests of format version 1 stay readable
// when they name no pack (no version 1 writer wrote packs), and that
// the pinned version 1 manifest, which names packs by hash, is refused
// with a clear error rather than misread.
func TestGoldenV1(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(goldenDir, "manifest-v1.golden"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	enc, err := hex.DecodeString(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.Decode(enc, "golden v1"); !errors.Is(err, cas.ErrCorrupt) || !strings.Contains(err.Error(), "version 1 layout names packs") {
		t.Errorf("v1 manifest with packs: %v", err)
	}
	m := full()
	m.Layout.Packs = nil
	v1 := m.Encode()
	v1[4] = 1
	got, err := manifest.Decode(v1, "v1")
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("v1 manifest without packs decodes to %+v, %v", got, err)
	}
}

// TestGoldenV2 checks that manifests of format version 2, pinned before
// version 3 let directories be lists, stay readable and mean the same.
func TestGoldenV2(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(goldenDir, "manifest-v2.golden"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	enc, err := hex.DecodeString(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	if enc[4] != 2 {
		t.Fatalf("manifest-v2.golden has version %d", enc[4])
	}
	got, err := manifest.Decode(enc, "golden v2")
	if err != nil || !reflect.DeepEqual(got, full()) {
		t.Errorf("v2 manifest decodes to %+v, %v", got, err)
	}
	// Only the version byte differs from version 3.
	enc[4] = 3
	if want := full().Encode(); !bytes.Equal(enc, want) {
		t.Errorf("v2 and v3 encodings differ beyond the version byte")
	}
}

// checkGolden checks the golden file name, the encoding of the manifest
// m that the function builder returns, written first under -update: it
// holds format version ver, decodes to m, and is what m encodes to.
func checkGolden(t *testing.T, name, builder string, m *manifest.Manifest, ver byte) {
	t.Helper()
	enc := m.Encode()
	path := filepath.Join(goldenDir, name)
	if *update {
		text := fmt.Sprintf("# manifest.Encode of %s() in manifest_test.go; id %s\n%s\n", builder, cas.Sum(enc), hex.EncodeToString(enc))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	want, err := hex.DecodeString(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	if want[4] != ver {
		t.Fatalf("%s has version %d", name, want[4])
	}
	got, err := manifest.Decode(want, "golden "+name)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("version %d manifest decodes to %+v, %v", ver, got, err)
	}
	if !bytes.Equal(enc, want) {
		t.Errorf("Encode differs from %s:\n got %x\nwant %x", path, enc, want)
	}
}

// withSpills is full() with spill packs in its layout: a version 4 manifest.
func withSpills() *manifest.Manifest {
	m := full()
	m.Layout.Spills = []manifest.SpillRef{{Session: m.Session, Number: m.Number, First: 1, Last: 3}, {Session: m.Session, Number: m.Number, First: 5, Last: 5}}
	return m
}

// TestGoldenV4 pins the encoding of a layout with spill packs (version
// 4), and checks that a manifest without them is still written as
// version 3, byte for byte as before.
func TestGoldenV4(t *testing.T) {
	m := withSpills()
	checkGolden(t, "manifest-v4.golden", "withSpills", m, 4)
	if v := full().Encode()[4]; v != 3 {
		t.Errorf("a manifest without spill packs is written as version %d, want 3", v)
	}
	// A version 4 manifest must name spill packs; one that does not is
	// not canonical.
	plain := full().Encode()
	plain[4] = 4
	if _, err := manifest.Decode(append(plain, 0), "v4 without spills"); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("v4 manifest naming no spill packs: %v", err)
	}
	// A spill pack numbered above its step's is refused.
	bad := withSpills()
	bad.Layout.Spills[0].Number = bad.Number + 1
	if _, err := manifest.Decode(bad.Encode(), "bad"); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("spill pack of a later step: %v", err)
	}
}

// withInStep is a manifest whose step object holds a merged pack, beside
// another session's pack held in a step object and an older pack.
func withInStep() *manifest.Manifest {
	m := withSpills()
	m.Layout.Packs = append(m.Layout.Packs,
		manifest.PackRef{Session: "other", Number: 3, Level: 1, InStep: true},
		manifest.PackRef{Session: m.Session, Number: m.Number, Level: 1, InStep: true})
	m.Copies = 7
	return m
}

// TestGoldenV5 pins the encoding of a layout naming packs held in step
// objects (version 5), and checks that a manifest without them is still
// written as version 3 or 4, byte for byte as before; keys of such packs
// are step keys.
func TestGoldenV5(t *testing.T) {
	m := withInStep()
	checkGolden(t, "manifest-v5.golden", "withInStep", m, 5)
	if v := withSpills().Encode()[4]; v != 4 {
		t.Errorf("a manifest with spill packs and no pack in a step object is written as version %d, want 4", v)
	}
	keys := manifest.LayoutKeys(manifest.Layout{Packs: m.Layout.Packs})
	if k := keys[len(keys)-1]; k != manifest.StepKey(m.Session, m.Number) {
		t.Errorf("the key of a pack in step %s@%d is %s", m.Session, m.Number, k)
	}
	// A version 4 manifest cannot name a pack held in a step object.
	old := withInStep()
	old.Copies = 0
	v4 := old.Encode()
	v4[4] = 4
	if _, err := manifest.Decode(v4, "v4 naming a pack in a step"); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("v4 manifest naming a pack in a step object: %v", err)
	}
	// Without spill packs, version 5 still says how many (none).
	none := withInStep()
	none.Layout.Spills = nil
	if got, err := manifest.Decode(none.Encode(), "v5 without spills"); err != nil || !reflect.DeepEqual(got, none) {
		t.Errorf("v5 manifest without spill packs decodes to %+v, %v", got, err)
	}
}

// TestNewerVersionRefused checks that a manifest from a newer cairn is
// refused by name, not misread.
func TestNewerVersionRefused(t *testing.T) {
	enc := full().Encode()
	enc[4] = manifest.FormatVersion + 1
	if _, err := manifest.Decode(enc, "newer"); err == nil || !strings.Contains(err.Error(), "unsupported manifest version") {
		t.Errorf("newer manifest: %v", err)
	}
}

// TestGolden pins the manifest encoding: its bytes are hashed into step
// ids and parent pointers, so they must never change silently.
func TestGolden(t *testing.T) {
	m := full()
	enc := m.Encode()
	path := filepath.Join(goldenDir, "manifest.golden")
	if *update {
		text := fmt.Sprintf("# manifest.Encode of full() in manifest_test.go; id %s\n%s\n", cas.Sum(enc), hex.EncodeToString(enc))
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	want, err := hex.DecodeString(lines[len(lines)-1])
	if err != nil {
		t.Fatal(err)
	}
	// Manifests already written stay readable.
	got, err := manifest.Decode(want, "golden")
	if err != nil {
		t.Fatalf("decode golden manifest: %v", err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("golden manifest decodes to\n%+v\nwant\n%+v", got, m)
	}
	if !bytes.Equal(enc, want) {
		t.Errorf("Encode differs from %s:\n got %x\nwant %x\na format change must be deliberate: bump FormatVersion and run go test -update", path, enc, want)
	}
}

func TestRoundTrip(t *testing.T) {
	minimal := &manifest.Manifest{Session: "s", Number: 1, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateJSON, Record: []byte{}, Root: tree.Ref{Data: []byte{}}}
	inline := &manifest.Manifest{Session: "s", Number: 2, Parent: &manifest.Pointer{Session: "s", Number: 1}, Time: time.Unix(1, 2).UTC(),
		Status: manifest.Done, Kind: manifest.StateJSON, Record: []byte(`{}`), Root: tree.Ref{Kind: tree.Inline, Data: []byte(`{"a":1}`)}}
	blob := &manifest.Manifest{Session: "S", Number: 1 << 62, Time: time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC), Kind: manifest.StateJSON, Record: []byte("null"),
		Root: tree.Ref{Kind: tree.Blob, ID: cas.Sum([]byte("b")), Size: 1 << 40}}
	for i, m := range []*manifest.Manifest{full(), minimal, inline, blob} {
		enc := m.Encode()
		got, err := manifest.Decode(enc, "m")
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%d: round trip\n got %+v\nwant %+v", i, got, m)
		}
		if again := got.Encode(); !bytes.Equal(again, enc) {
			t.Errorf("%d: re-encoding differs", i)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good := full().Encode()
	for n := 0; n < len(good); n++ {
		if _, err := manifest.Decode(good[:n], "m"); !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("Decode of %d/%d bytes: %v, want ErrCorrupt", n, len(good), err)
		}
	}
	if _, err := manifest.Decode(append(bytes.Clone(good), 0), "m"); !errors.Is(err, cas.ErrCorrupt) {
		t.Fatalf("Decode with a trailing byte: %v, want ErrCorrupt", err)
	}
	bad := func(f func(m *manifest.Manifest)) []byte {
		m := full()
		f(m)
		return m.Encode()
	}
	for name, b := range map[string][]byte{
		"bad magic":        append([]byte("CRNX"), good[4:]...),
		"version 4":        append([]byte("CRNM\x04"), good[5:]...),
		"version 0":        append([]byte("CRNM\x00"), good[5:]...),
		"step 0":           bad(func(m *manifest.Manifest) { m.Number = 0; m.Parent = nil }),
		"unknown status":   bad(func(m *manifest.Manifest) { m.Status = 3 }),
		"unknown kind":     bad(func(m *manifest.Manifest) { m.Kind = 0 }),
		"parent not older": bad(func(m *manifest.Manifest) { m.Parent.Number = m.Number }),
		"bad session":      bad(func(m *manifest.Manifest) { m.Session = "../x" }),
		"empty session":    bad(func(m *manifest.Manifest) { m.Session = "" }),
		"bad parent name":  bad(func(m *manifest.Manifest) { m.Parent.Session = ".hidden" }),
		"bad range name":   bad(func(m *manifest.Manifest) { m.Layout.Steps[0].Session = "a/b" }),
		"empty range":      bad(func(m *manifest.Manifest) { m.Layout.Steps[0].First = 9; m.Layout.Steps[0].Last = 8 }),
		"range from 0":     bad(func(m *manifest.Manifest) { m.Layout.Steps[0].First = 0 }),
		"long writer":      bad(func(m *manifest.Manifest) { m.Writer = strings.Repeat("w", 257) }),
		"bad root kind":    bad(func(m *manifest.Manifest) { m.Root.Kind = 9 }),
		"long inline root": bad(func(m *manifest.Manifest) { m.Root = tree.Ref{Kind: tree.Inline, Data: make([]byte, tree.InlineMax+1)} }),
	} {
		if _, err := manifest.Decode(b, name); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("%s: Decode = %v, want ErrCorrupt", name, err)
		}
	}
	// Unknown flag bits are corrupt, not ignored.
	enc := full().Encode()
	m := full()
	m.Truncated = false
	off := bytes.Index(enc, []byte("\x01\x02\x01\x0fhost-7")) // status, kind, flags, len(writer)
	if off < 0 {
		t.Fatal("flags byte not found")
	}
	enc[off+2] = 0x03
	if _, err := manifest.Decode(enc, "m"); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("unknown flags: %v, want ErrCorrupt", err)
	}
}

func TestStatus(t *testing.T) {
	for _, s := range []manifest.Status{manifest.Running, manifest.AwaitingInput, manifest.Done} {
		got, err := manifest.ParseStatus(s.String())
		if err != nil || got != s {
			t.Errorf("ParseStatus(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := manifest.ParseStatus("paused"); err == nil {
		t.Error("ParseStatus(paused) succeeded")
	}
	if got, want := manifest.Status(9).String(), "status(9)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestValidSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"chat-1", true},
		{"A.b_c-9", true},
		{"x.", true},
		{"a..b", true},
		{"-", true},
		{strings.Repeat("s", 128), true},
		{strings.Repeat("s", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{".hidden", false},
		{"a/b", false},
		{"a b", false},
		{"é", false},
		{"a\x00", false},
		{"a\n", false},
		{"head/x", false},
	} {
		if got := manifest.ValidSession(tc.name) == nil; got != tc.ok {
			t.Errorf("ValidSession(%q) ok = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// TestSessionKeysValid: every valid session name makes valid store keys.
func TestSessionKeysValid(t *testing.T) {
	for _, s := range []string{"a", "x.", "a..b", "-", "_", strings.Repeat("s", 128)} {
		for _, k := range []string{manifest.StepKey(s, 1), manifest.StepKey(s, 1<<62), manifest.HintKey(s), manifest.SessionKey(s)} {
			if err := cas.ValidateKey(k); err != nil {
				t.Errorf("session %q: %v", s, err)
			}
		}
	}
}

func TestParseStepKey(t *testing.T) {
	for _, tc := range []struct {
		key     string
		session string
		step    uint64
		ok      bool
	}{
		{manifest.StepKey("s", 1), "s", 1, true},
		{manifest.StepKey("chat-1", 1234), "chat-1", 1234, true},
		{manifest.StepKey("s", 1<<62), "s", 1 << 62, true},
		{"steps/s/18446744073709551615", "s", 1<<64 - 1, true},
		{"steps/s/18446744073709551616", "", 0, false}, // overflows uint64
		{"steps/s/00000000000000000000", "", 0, false}, // step 0
		{"steps/s/0000000000000000001", "", 0, false},  // 19 digits
		{"steps/s/000000000000000000001", "", 0, false},
		{"steps/s/head", "", 0, false},
		{"steps/s/+0000000000000000001", "", 0, false},
		{"steps/s/-0000000000000000001", "", 0, false},
		{"steps/s", "", 0, false},
		{"sessions/s", "", 0, false},
		{"packs/" + strings.Repeat("0", 64), "", 0, false},
		{"", "", 0, false},
	} {
		s, n, ok := manifest.ParseStepKey(tc.key)
		if s != tc.session || n != tc.step || ok != tc.ok {
			t.Errorf("ParseStepKey(%q) = %q, %d, %v; want %q, %d, %v", tc.key, s, n, ok, tc.session, tc.step, tc.ok)
		}
	}
	for _, n := range []uint64{1, 9, 10, 99999, 1<<62 + 12345} {
		s, got, ok := manifest.ParseStepKey(manifest.StepKey("abc", n))
		if !ok || s != "abc" || got != n {
			t.Errorf("round trip of step %d: %q %d %v", n, s, got, ok)
		}
	}
}

func TestKeysSortByStep(t *testing.T) {
	// Head discovery relies on step keys listing in step order.
	prev := ""
	for _, n := range []uint64{1, 2, 9, 10, 11, 99, 100, 1000, 1 << 40, 1 << 62} {
		k := manifest.StepKey("s", n)
		if k <= prev {
			t.Fatalf("%q does not sort after %q", k, prev)
		}
		prev = k
	}
	if h := manifest.HintKey("s"); h <= manifest.StepKey("s", 1<<64-1) {
		t.Errorf("hint key %q sorts among the step keys", h)
	}
}

func BenchmarkManifestEncode(b *testing.B) {
	m := full()
	b.SetBytes(int64(len(m.Encode())))
	for b.Loop() {
		m.Encode()
	}
}

func BenchmarkManifestDecode(b *testing.B) {
	enc := full().Encode()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := manifest.Decode(enc, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// withKey is withInStep() written by a commit that carried an
// idempotency key: a version 6 manifest.
func withKey() *manifest.Manifest {
	m := withInStep()
	m.IdempotencyKey = "0b6e2c1a-5f1d-4c3e-9a7b-2d8f00c0ffee"
	return m
}

// TestGoldenV6 pins the encoding of a manifest carrying its commit's
// idempotency key (version 6), checks that a manifest without one is
// written as before (versions 3 to 5, byte for byte), and that a key a
// commit would refuse, or a version 6 manifest without a key, is refused
// as corrupt.
func TestGoldenV6(t *testing.T) {
	m := withKey()
	checkGolden(t, "manifest-v6.golden", "withKey", m, 6)
	for want, m := range map[byte]*manifest.Manifest{3: full(), 4: withSpills(), 5: withInStep()} {
		if v := m.Encode()[4]; v != want {
			t.Errorf("a manifest without a key is written as version %d, want %d", v, want)
		}
	}
	// Version 6 says the layout's spill packs and copies whatever they
	// are, none included.
	plain := full()
	plain.IdempotencyKey = "k"
	if got, err := manifest.Decode(plain.Encode(), "v6 plain"); err != nil || !reflect.DeepEqual(got, plain) {
		t.Errorf("v6 manifest without spill packs or copies decodes to %+v, %v", got, err)
	}
	// A version 6 manifest must carry a key, and a valid one.
	for _, key := range []string{"", "a b", strings.Repeat("k", manifest.MaxIdempotencyKey+1), "é"} {
		bad := full()
		bad.IdempotencyKey = "k"
		b := bad.Encode()
		b = append(b[:len(b)-2], byte(len(key)))
		b = append(b, key...)
		if _, err := manifest.Decode(b, "v6 key"); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("v6 manifest with key %q: %v, want ErrCorrupt", key, err)
		}
	}
}

func TestValidIdempotencyKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"k", true},
		{"0b6e2c1a-5f1d-4c3e-9a7b-2d8f00c0ffee", true},
		{"job-17/step-4:try=2", true},
		{"aGVsbG8+/w==", true},
		{strings.Repeat("k", 128), true},
		{strings.Repeat("k", 129), false},
		{"", false},
		{"a b", false},
		{"a\tb", false},
		{"é", false},
		{"a\x00", false},
		{"a\x7f", false},
	} {
		err := manifest.ValidIdempotencyKey(tc.key)
		if got := err == nil; got != tc.ok {
			t.Errorf("ValidIdempotencyKey(%q) ok = %v, want %v", tc.key, got, tc.ok)
		}
		if err != nil && !errors.Is(err, manifest.ErrInvalidIdempotencyKey) {
			t.Errorf("ValidIdempotencyKey(%q) = %v, not ErrInvalidIdempotencyKey", tc.key, err)
		}
	}
}
