package manifest_test

import (
	"bytes"
	"errors"
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

// FuzzManifestDecode checks that Decode never panics, fails only with
// ErrCorrupt, and that whatever decodes is stable: encoding it and
// decoding again gives the same manifest and the same bytes.
func FuzzManifestDecode(f *testing.F) {
	for _, m := range seedManifests() {
		f.Add(m.Encode())
	}
	f.Add([]byte("CRNM\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := manifest.Decode(data, "fuzz")
		if err != nil {
			if !errors.Is(err, cas.ErrCorrupt) {
				t.Fatalf("Decode = %v, want ErrCorrupt", err)
			}
			if m != nil {
				t.Fatal("Decode returned a manifest with an error")
			}
			return
		}
		if err := manifest.ValidSession(m.Session); err != nil {
			t.Fatalf("decoded an invalid session: %v", err)
		}
		if m.Number == 0 || len(m.Record) > manifest.MaxRecordSize {
			t.Fatalf("decoded step %d with %d record bytes", m.Number, len(m.Record))
		}
		enc := m.Encode()
		m2, err := manifest.Decode(enc, "re-encoded")
		if err != nil {
			t.Fatalf("re-encoded manifest does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the manifest:\n%+v\n%+v", m, m2)
		}
		if enc2 := m2.Encode(); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%x\n%x", enc, enc2)
		}
	})
}

func seedManifests() []*manifest.Manifest {
	return []*manifest.Manifest{
		full(),
		{Session: "s", Number: 1, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateJSON},
		{Session: "s", Number: 2, Parent: &manifest.Pointer{Session: "s", Number: 1}, Time: time.Unix(-1, 0).UTC(), Kind: manifest.StateJSON,
			Root: tree.Ref{Kind: tree.Inline, Data: []byte(`[1,2]`)}},
		withSpills(),
		withInStep(),
		withKey(),
	}
}

// TestWriteFuzzCorpus rewrites the committed seed corpus (with -update).
func TestWriteFuzzCorpus(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata/fuzz")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzManifestDecode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		text := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range seedManifests() {
		write(fmt.Sprintf("seed-%d", i), m.Encode())
	}
	m := full()
	m.Record = []byte(strings.Repeat(`{"k":"v"},`, 100))
	write("long-record", m.Encode())
	// Overlong varints decode to the same manifest as the canonical bytes.
	enc := full().Encode()
	write("overlong-step", append(append(bytes.Clone(enc[:5+1+len("chat-1.fork_A")]), 0xd2, 0x89, 0x80, 0x00), enc[5+1+len("chat-1.fork_A")+2:]...))
}
