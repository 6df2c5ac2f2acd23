package cas_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// BenchmarkSum is BLAKE3-256 content ids on blob-sized inputs, one core.
func BenchmarkSum(b *testing.B) {
	for _, n := range []int{256, 4 << 10, 64 << 10, 1 << 20} {
		data := make([]byte, n)
		rand.NewChaCha8([32]byte{1}).Read(data)
		b.Run(fmt.Sprintf("%dB", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				cas.Sum(data)
			}
		})
	}
}

// BenchmarkVerify is the re-hash every read does.
func BenchmarkVerify(b *testing.B) {
	data := make([]byte, 64<<10)
	id := cas.Sum(data)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := cas.Verify(id, data, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestVerifyNamesIDsApart: an id damaged past its short form must not be
// reported as "hashes to X, want X".
func TestVerifyNamesIDsApart(t *testing.T) {
	data := []byte("some content")
	want := cas.Sum(data)
	want[31] ^= 1
	err := cas.Verify(want, data, "obj")
	if err == nil {
		t.Fatal("Verify of a damaged id succeeded")
	}
	if s := err.Error(); !strings.Contains(s, cas.Sum(data).String()) || !strings.Contains(s, want.String()) {
		t.Fatalf("Verify = %v; want both whole ids when their short forms agree", err)
	}
}
