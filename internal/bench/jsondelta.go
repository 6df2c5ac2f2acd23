package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/rusage"
)

func init() {
	phases["json-delta"] = phaseJSONDelta
}

// Issue 14's JSON targets: a whole-document commit at most 2× one
// fsync'd write of its step object, 10 MB no more than 1.5× 10 KB for the
// same delta, and a patch under 0.5 ms of CPU whatever the size.
const (
	targetJSONFsync   = 2.0
	targetJSONFlat    = 1.5
	targetPatchCPUms  = 0.5
	deltaMessageBytes = 1024
)

// JSONDeltaResult is one document size's figures for the same delta
// each step: one ~1 KB message appended, the scratchpad and the step
// number rewritten.
type JSONDeltaResult struct {
	DocBytes int `json:"doc_bytes"` // at the start
	Steps    int `json:"steps"`
	// Whole: the whole document handed over, local store.
	Whole Latency `json:"whole"`
	// Fsync: after each whole-document step, one new file of the step
	// object's size written and made durable (the file and its directory
	// fsync'd) on the same disk.
	Fsync Latency `json:"fsync_step_object"`
	// Read: after each whole-document step, one read of the document
	// handed over, at memory speed: the least a commit that is handed the
	// whole document must do to learn what changed. The difference
	// between the large and the small document's commits is measured
	// against it.
	Read Latency `json:"read_document"`
	// PatchCPU is the CPU time (user + system, GC included) of a commit
	// of the same delta as a JSON Patch, per step, on an in-memory store:
	// the fsync aside.
	PatchCPUms float64 `json:"patch_cpu_ms"`
	Patch      Latency `json:"patch_local"` // the patch on the local store, for reference
}

// deltaDoc is a document of about size bytes that grows by one message a
// step.
type deltaDoc struct {
	r        *rand.Rand
	messages []byte // `{"messages":[m1,...,mN`
	n        int
	step     int
}

func newDeltaDoc(seed uint64, size int) *deltaDoc {
	d := &deltaDoc{r: rand.New(rand.NewPCG(seed, 0x6a736f6e)), messages: []byte(`{"messages":[`)}
	for len(d.messages) < size {
		d.add(d.message(4096))
	}
	return d
}

func (d *deltaDoc) message(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghij klmnopqrst uvwxyz"[d.r.IntN(28)]
	}
	return []byte(fmt.Sprintf(`{"role":"assistant","content":"%s"}`, b))
}

func (d *deltaDoc) add(msg []byte) {
	if d.n > 0 {
		d.messages = append(d.messages, ',')
	}
	d.messages = append(d.messages, msg...)
	d.n++
}

func (d *deltaDoc) tail() string {
	return fmt.Sprintf(`],"scratchpad":%q,"step":%d}`, fmt.Sprintf("step %d: %s", d.step, strings.Repeat("thinking ", 20)), d.step)
}

// text returns the whole document.
func (d *deltaDoc) text() []byte {
	return append(append([]byte(nil), d.messages...), d.tail()...)
}

// next advances one step and returns the new document and the same
// change as a JSON Patch.
func (d *deltaDoc) next() (doc, patch []byte) {
	d.step++
	msg := d.message(deltaMessageBytes)
	d.add(msg)
	patch = []byte(fmt.Sprintf(`[{"op":"add","path":"/messages/-","value":%s},{"op":"replace","path":"/scratchpad","value":%q},{"op":"replace","path":"/step","value":%d}]`,
		msg, fmt.Sprintf("step %d: %s", d.step, strings.Repeat("thinking ", 20)), d.step))
	return d.text(), patch
}

func jsonDeltaSizes(cfg Config) []int {
	if cfg.Quick {
		return []int{10 << 10, 1 << 20}
	}
	return []int{10 << 10, 1 << 20, 10 << 20}
}

func jsonDeltaSteps(cfg Config) int {
	if cfg.Quick {
		return 15
	}
	return 100
}

func processCPU() time.Duration { return rusage.SelfCPU() }

// phaseJSONDelta measures, at one document size (arg, bytes), the same
// delta committed as the whole document and as a JSON Patch.
func phaseJSONDelta(ctx context.Context, cfg Config, arg string) (any, error) {
	size, err := strconv.Atoi(arg)
	if err != nil {
		return nil, fmt.Errorf("document size %q: %w", arg, err)
	}
	steps := jsonDeltaSteps(cfg)
	res := JSONDeltaResult{Steps: steps}
	dir := filepath.Join(cfg.Dir, "json-delta")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ws, err := cairn.Open(ctx, filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	mem, err := cairn.Open(ctx, "mem://")
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	whole, _ := ws.Session("whole")
	patched, _ := ws.Session("patch")
	cpuOnly, _ := mem.Session("patch")

	d := newDeltaDoc(cfg.Seed, size)
	first := d.text()
	res.DocBytes = len(first)
	for _, s := range []*cairn.Session{whole, patched, cpuOnly} {
		if _, err := s.Commit(ctx, cairn.JSON(first), cairn.CommitOptions{}); err != nil {
			return nil, err
		}
	}
	var wholeT, fsyncT, readT, patchT []time.Duration
	var patches [][]byte
	for i := range steps {
		doc, patch := d.next()
		start := time.Now()
		st, err := whole.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{})
		if err != nil {
			return nil, err
		}
		wholeT = append(wholeT, time.Since(start))
		f, err := fsyncWrite(filepath.Join(dir, fmt.Sprintf("object-%d", i)), int(st.StoredBytes))
		if err != nil {
			return nil, err
		}
		fsyncT = append(fsyncT, f)
		readT = append(readT, readOnce(doc))
		start = time.Now()
		if _, err := patched.Commit(ctx, cairn.Patch(patch), cairn.CommitOptions{}); err != nil {
			return nil, err
		}
		patchT = append(patchT, time.Since(start))
		patches = append(patches, patch)
	}
	// The CPU of the patches alone, apart from the garbage the whole
	// documents above leave for the collector.
	runtime.GC()
	c0 := processCPU()
	for _, patch := range patches {
		if _, err := cpuOnly.Commit(ctx, cairn.Patch(patch), cairn.CommitOptions{}); err != nil {
			return nil, err
		}
	}
	cpu := processCPU() - c0
	res.Whole, res.Fsync, res.Read, res.Patch = summarize(wholeT), summarize(fsyncT), summarize(readT), summarize(patchT)
	res.PatchCPUms = float64(cpu) / 1e6 / float64(steps)
	return res, nil
}

// readOnce times one pass over doc at memory speed (a search for a byte
// JSON text never holds).
func readOnce(doc []byte) time.Duration {
	start := time.Now()
	if bytes.IndexByte(doc, 0) >= 0 {
		panic("bench: a NUL byte in a JSON document")
	}
	return time.Since(start)
}

// fsyncWrite times making a new file of n bytes durable: creating it,
// writing it, fsyncing it and then its directory, without which a crash
// can lose the new name. That is the least any store must do to make a
// step object durable as a new file, and what cairn's local store does
// (cas/fs: a temporary file fsync'd, linked into place, the directory
// fsync'd).
func fsyncWrite(path string, n int) (time.Duration, error) {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	start := time.Now()
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return 0, err
	}
	err = dir.Sync()
	took := time.Since(start)
	dir.Close()
	os.Remove(path)
	return took, err
}

// jsonDeltaMarkdown reports the JSON delta targets as ratios.
func jsonDeltaMarkdown(r *Results) string {
	if len(r.JSONDelta) == 0 {
		return ""
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	small := r.JSONDelta[0]
	for _, j := range r.JSONDelta {
		q := ratio(j.Whole.P50, j.Fsync.P50)
		w("| JSON commit p50, whole document of %s, one ~1 KB message appended | %s | one fsync'd write of the step object as a new file (file and directory fsync'd): %s | %.2f× | ≤ %.0f× | %s |\n",
			size(int64(j.DocBytes)), ms(j.Whole.P50), ms(j.Fsync.P50), q, targetJSONFsync, yes(q <= targetJSONFsync))
	}
	for _, j := range r.JSONDelta[1:] {
		q := ratio(j.Whole.P50, small.Whole.P50)
		w("| JSON commit p50 at %s ÷ at %s, same delta | %s | %s | %.2f× | ≤ %.1f× | %s |\n",
			size(int64(j.DocBytes)), size(int64(small.DocBytes)), ms(j.Whole.P50), ms(small.Whole.P50), q, targetJSONFlat, yes(q <= targetJSONFlat))
	}
	for _, j := range r.JSONDelta[1:] {
		// The floor: the small document's commit plus one read of the
		// large one, which a commit handed the whole document cannot skip.
		extra := j.Whole.P50 - small.Whole.P50
		floor := ratio(small.Whole.P50+j.Read.P50, small.Whole.P50)
		w("| JSON commit p50 at %s less at %s, same delta (were it only one read of the document more, the ratio above would be %.2f×) | %s | one read of the %s document at memory speed: %s | %.2f× | | |\n",
			size(int64(j.DocBytes)), size(int64(small.DocBytes)), floor, ms(extra), size(int64(j.DocBytes)), ms(j.Read.P50), ratio(extra, j.Read.P50))
	}
	for _, j := range r.JSONDelta {
		w("| JSON Patch commit CPU per step, document of %s (in-memory store; local p50 %s) | %.3f ms | | | < %.1f ms | %s |\n",
			size(int64(j.DocBytes)), ms(j.Patch.P50), j.PatchCPUms, targetPatchCPUms, yes(j.PatchCPUms < targetPatchCPUms))
	}
	return b.String()
}
