package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyDamagedDataNamedOnce: a byte flipped in the data of a step
// object is reported against that object, for each step that uses it, and
// nothing more. Before, every later step whose state reads a blob of it
// was also told "blob … is not in any object of the step's layout", which
// is untrue (the layout names the object; the object is damaged) and sends
// the user looking for a second fault.
func TestVerifyDamagedDataNamedOnce(t *testing.T) {
	store, dir := t.TempDir(), t.TempDir()
	big := strings.Repeat("0123456789abcdef", 300)
	for i, f := range []string{"f1", "f2", "f3"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(big[i:]), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, errs, code := cli(t, store, "", "commit", "w", "--dir", dir); code != 0 {
			t.Fatalf("commit: %s", errs)
		}
	}
	key := filepath.Join(store, "steps", "w", "00000000000000000001")
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1 // in f1's blob, which every later step's state still holds
	if err := os.WriteFile(key, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := cli(t, store, "", "verify")
	if code != 1 {
		t.Fatalf("verify of a damaged store: exit %d, %q %q", code, out, errs)
	}
	if !strings.Contains(out, "BAD step w@1 is damaged (content hashes to ") {
		t.Errorf("verify does not name the damaged step: %q", out)
	}
	if strings.Contains(out, "is not in any object") {
		t.Errorf("verify reports a second, untrue fault: %q", out)
	}
}
