package headcache

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
)

// bigHead is a head shaped like the 2,000-file bench session's: one
// large first step and many small ones, 8,800 blobs in all.
func bigHead(n uint64) *Head {
	h := sample(n)
	h.Objects = nil
	blob := 0
	for o := 0; o < 40; o++ {
		count := 30
		if o == 0 {
			count = 8800 - 39*30
		}
		obj := manifest.IndexObject{Key: fmt.Sprintf("steps/s/%020d", o+1)}
		for i := 0; i < count; i++ {
			blob++
			obj.Entries = append(obj.Entries, pack.Entry{ID: cas.Sum([]byte(fmt.Sprint(blob))), Offset: int64(i * 900), StoredLen: 900, RawLen: 2048})
			obj.Bytes += 900
		}
		h.Objects = append(h.Objects, obj)
	}
	return h
}

// BenchmarkSaveLoad is what the head cache costs a CLI commit of that
// session: loading the files, then saving the next head, which adds a
// step object of 10 blobs (so that the base is written again now and
// then, as in a session).
func BenchmarkSaveLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), FileName("k"))
	h := bigHead(1)
	if _, err := Save(path, "k", h); err != nil {
		b.Fatal(err)
	}
	step := 1000
	for b.Loop() {
		got, why := Load(path, "k")
		if got == nil {
			b.Fatal(why)
		}
		got.Number++
		step++
		obj := manifest.IndexObject{Key: fmt.Sprintf("steps/s/%020d", step)}
		for i := range 10 {
			obj.Entries = append(obj.Entries, pack.Entry{ID: cas.Sum(fmt.Appendf(nil, "%d.%d", step, i)), Offset: int64(i * 900), StoredLen: 900, RawLen: 2048})
			obj.Bytes += 900
		}
		got.Objects = append(got.Objects, obj)
		if _, err := Save(path, "k", got); err != nil {
			b.Fatal(err)
		}
	}
}
