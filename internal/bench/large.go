package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/chunker"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/workload"
	"github.com/zeebo/blake3"
)

func init() {
	phases["large-gen"] = phaseLargeGen
	phases["large-disk"] = phaseLargeDisk
	phases["large-blake3"] = phaseLargeBlake3
	phases["large-zstd"] = phaseLargeZstd
	phases["large-cdc"] = phaseLargeCDC
	phases["large-cairn"] = phaseLargeCairn
	phases["large-checkout"] = phaseLargeCheckout
	phases["large-restic"] = phaseLargeRestic
}

// Large-state targets (issue 14, target 4).
const targetLargeRSS = 256 << 20 // peak RSS of a commit or a checkout, whatever the size

// largeRSS returns the peak RSS of phase on variant, from the run's usage.
func (r *Results) largeRSS(phase, variant string) int64 {
	for _, u := range r.Usage {
		if u.Phase == phase && u.Arg == variant {
			return u.MaxRSS
		}
	}
	return 0
}

// slowestStage returns the slowest of the stages a large commit runs,
// each measured alone on all cores (the disk on its one stream): read
// and write are the disk's, chunking, hashing and compressing the CPU's.
func (l LargeResult) slowestStage() (float64, string) {
	slow, name := l.Disk.MBps(), "disk write+fsync"
	for _, s := range []struct {
		t    Throughput
		name string
	}{{l.CDC, "chunking, all cores"}, {l.Blake3, "BLAKE3, all cores"}, {l.Zstd, "zstd-fastest, all cores"}} {
		if v := s.t.MBps(); v > 0 && v < slow {
			slow, name = v, s.name
		}
	}
	return slow, name
}

// cpuCeiling returns the throughput the CPU stages reach together when
// they share the same cores: each byte is chunked, hashed and compressed,
// and each stage was measured alone on all cores, so together they take
// the sum of their per-byte times. No commit on this machine can beat it,
// however well its pipeline overlaps the stages. Zero when a stage was
// not measured.
func (l LargeResult) cpuCeiling() float64 {
	var perByte float64
	for _, t := range []Throughput{l.CDC, l.Blake3, l.Zstd} {
		v := t.MBps()
		if v <= 0 {
			return 0
		}
		perByte += 1 / v
	}
	return 1 / perByte
}

// Large-state variants (a phase's arg).
const (
	Incompressible = "incompressible"
	Compressible   = "compressible"
)

// Throughput is one large-state measurement.
type Throughput struct {
	Bytes  int64         `json:"bytes"`
	Took   time.Duration `json:"took_ns"`
	Stored int64         `json:"stored_bytes,omitempty"`
}

// MBps is the throughput in MB/s (10^6 bytes).
func (t Throughput) MBps() float64 {
	if t.Took <= 0 {
		return 0
	}
	return float64(t.Bytes) / 1e6 / t.Took.Seconds()
}

func largeDir(cfg Config, variant string) string {
	return filepath.Join(cfg.Dir, "large-"+variant)
}

func largeFile(cfg Config, variant string) string {
	return filepath.Join(largeDir(cfg, variant), "state", "state.bin")
}

// phaseLargeGen writes the variant's state file (not timed).
func phaseLargeGen(_ context.Context, cfg Config, variant string) (any, error) {
	p := largeFile(cfg, variant)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(p)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, workload.Large(cfg.Seed, cfg.LargeSize, variant == Compressible))
	if err != nil {
		f.Close()
		return nil, err
	}
	return Throughput{Bytes: n}, f.Close()
}

// phaseLargeDisk writes LargeSize fresh bytes to a new file and fsyncs it:
// the disk's sequential write speed.
func phaseLargeDisk(_ context.Context, cfg Config, _ string) (any, error) {
	p := filepath.Join(cfg.Dir, "disk-speed.bin")
	buf := make([]byte, 8<<20)
	rand.Read(buf)
	start := time.Now()
	f, err := os.Create(p)
	if err != nil {
		return nil, err
	}
	var n int64
	for n < cfg.LargeSize {
		k, err := f.Write(buf[:min(int64(len(buf)), cfg.LargeSize-n)])
		n += int64(k)
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	t := Throughput{Bytes: n, Took: time.Since(start)}
	return t, os.Remove(p)
}

// parallel reads the variant's file in blocks and runs fn on each block in
// GOMAXPROCS workers; it returns the bytes processed and fn's total output.
func parallel(cfg Config, variant string, block int, fn func(worker int, b []byte) int64) (Throughput, error) {
	f, err := os.Open(largeFile(cfg, variant))
	if err != nil {
		return Throughput{}, err
	}
	defer f.Close()
	workers := runtime.GOMAXPROCS(0)
	blocks := make(chan []byte, workers)
	free := make(chan []byte, 2*workers)
	for range 2 * workers {
		free <- make([]byte, block)
	}
	var wg sync.WaitGroup
	outs := make([]int64, workers)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range blocks {
				outs[w] += fn(w, b)
				free <- b[:cap(b)]
			}
		}()
	}
	var total int64
	var rerr error
	for {
		b := <-free
		n, err := io.ReadFull(f, b)
		if n > 0 {
			total += int64(n)
			blocks <- b[:n]
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	close(blocks)
	wg.Wait()
	t := Throughput{Bytes: total, Took: time.Since(start)}
	for _, o := range outs {
		t.Stored += o
	}
	return t, rerr
}

// phaseLargeBlake3 hashes the state in 1 MiB blocks on all cores.
func phaseLargeBlake3(_ context.Context, cfg Config, variant string) (any, error) {
	return parallel(cfg, variant, 1<<20, func(_ int, b []byte) int64 {
		sum := blake3.Sum256(b)
		return int64(sum[0] & 0)
	})
}

// phaseLargeCDC cuts the state into content-defined chunks (cairn's
// chunker.Default) in 1 MiB blocks on all cores: the chunker's speed.
func phaseLargeCDC(_ context.Context, cfg Config, variant string) (any, error) {
	return parallel(cfg, variant, 1<<20, func(_ int, b []byte) int64 {
		return int64(len(chunker.Default.Boundaries(b)) & 0)
	})
}

// phaseLargeZstd compresses the state in 1 MiB blocks on all cores as
// cairn stores a blob (pack.EncodeBlob: zstd's fastest level, its
// encoders and their choice of options); Stored is the compressed size.
func phaseLargeZstd(_ context.Context, cfg Config, variant string) (any, error) {
	dsts := make([][]byte, runtime.GOMAXPROCS(0))
	return parallel(cfg, variant, 1<<20, func(w int, b []byte) int64 {
		dsts[w] = pack.EncodeBlob(dsts[w][:0], b)
		return int64(len(dsts[w]))
	})
}

// phaseLargeCairn commits the state (a directory holding the one file) as
// the first step of a session in a fresh local store, which it leaves
// for large-checkout.
func phaseLargeCairn(ctx context.Context, cfg Config, variant string) (any, error) {
	store := filepath.Join(cfg.Dir, "cairn-large-"+variant)
	if err := os.RemoveAll(store); err != nil {
		return nil, err
	}
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	s, err := ws.Session("large")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := s.Commit(ctx, cairn.Dir(filepath.Dir(largeFile(cfg, variant))), cairn.CommitOptions{}); err != nil {
		return nil, err
	}
	t := Throughput{Bytes: cfg.LargeSize, Took: time.Since(start)}
	t.Stored, err = dirBytes(store)
	return t, err
}

// phaseLargeCheckout checks out the step large-cairn committed into a
// fresh directory (in a fresh process: nothing cached), then removes
// the store and the copy.
func phaseLargeCheckout(ctx context.Context, cfg Config, variant string) (any, error) {
	store := filepath.Join(cfg.Dir, "cairn-large-"+variant)
	out := filepath.Join(cfg.Dir, "checkout-large-"+variant)
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	s, err := ws.Session("large")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	st, err := s.Head(ctx)
	if err != nil {
		return nil, err
	}
	if err := st.Checkout(ctx, out); err != nil {
		return nil, err
	}
	t := Throughput{Took: time.Since(start)}
	if t.Bytes, err = dirBytes(out); err != nil {
		return nil, err
	}
	if t.Bytes != cfg.LargeSize {
		return nil, fmt.Errorf("checked out %d bytes of the %d committed", t.Bytes, cfg.LargeSize)
	}
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	return t, os.RemoveAll(store)
}

// phaseLargeRestic backs the state up into a fresh local restic
// repository (init not timed).
func phaseLargeRestic(ctx context.Context, cfg Config, variant string) (any, error) {
	if cfg.Restic == "" {
		return nil, fmt.Errorf("no restic binary configured")
	}
	dir := largeDir(cfg, variant)
	repo := filepath.Join(dir, "restic-repo")
	if err := os.RemoveAll(repo); err != nil {
		return nil, err
	}
	if err := tool(ctx, dir, cfg.Restic, "init", "-q", "-r", repo); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := tool(ctx, dir, cfg.Restic, "backup", "-q", "-r", repo, "state"); err != nil {
		return nil, err
	}
	t := Throughput{Bytes: cfg.LargeSize, Took: time.Since(start)}
	var err error
	if t.Stored, err = dirBytes(repo); err != nil {
		return nil, err
	}
	return t, os.RemoveAll(repo)
}
