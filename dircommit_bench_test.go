package cairn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/workload"
)

// BenchmarkDirCommitFresh is one step of the 2,000-file workload as
// `cairn commit --dir` makes it, less the process start: a fresh
// workspace that starts from the head cache, a directory state built
// through the stat cache, both caches saved (issue 14, target 3).
func BenchmarkDirCommitFresh(b *testing.B) {
	ctx := context.Background()
	tmp := b.TempDir()
	tree, store, cache := filepath.Join(tmp, "tree"), filepath.Join(tmp, "store"), filepath.Join(tmp, "cache")
	f := workload.NewFiles(workload.FilesOptions{Seed: 1})
	step := func() {
		if err := workload.Apply(tree, f.Next()); err != nil {
			b.Fatal(err)
		}
		ws, err := cairn.Open(ctx, store)
		if err != nil {
			b.Fatal(err)
		}
		ws.UseHeadCache(cache)
		s, err := ws.Session("s")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Commit(ctx, cairn.DirWithCache(tree, cache), cairn.CommitOptions{}); err != nil {
			b.Fatal(err)
		}
		ws.Close()
	}
	if err := os.MkdirAll(tree, 0o755); err != nil {
		b.Fatal(err)
	}
	for range 40 {
		step()
	}
	for b.Loop() {
		step()
	}
}
