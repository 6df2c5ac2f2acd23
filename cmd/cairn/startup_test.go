package main

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestStartupInitsSmall: every process pays for the package initialisers
// of this module before main runs, so none of them may do real work (a
// regular expression compiled at init cost each `cairn` process ~1,700
// allocations). The count of allocations comes from the runtime's own
// init trace, so the check is exact, not timed.
func TestStartupInitsSmall(t *testing.T) {
	bin := cairnBinary(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cairn version: %v\n%s", err, out)
	}
	const maxAllocs = 64
	seen := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		// init github.com/cairnlog/cairn/manifest @11 ms, 0.81 ms clock, 118816 bytes, 1699 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "init" || (f[1] != "main" && !strings.HasPrefix(f[1], "github.com/cairnlog/cairn")) {
			continue
		}
		seen++
		if len(f) < 2 || f[len(f)-1] != "allocs" {
			t.Fatalf("unexpected init trace line %q", sc.Text())
		}
		n, err := strconv.Atoi(f[len(f)-2])
		if err != nil {
			t.Fatalf("init trace line %q: %v", sc.Text(), err)
		}
		if n > maxAllocs {
			t.Errorf("package %s allocates %d times at init (at most %d): make it lazy", f[1], n, maxAllocs)
		}
	}
	if seen == 0 {
		t.Fatalf("no init trace of this module in:\n%s", out)
	}
}

// TestCommitSmallNoCollection: a `cairn commit` of a small document in a
// fresh process finishes before its heap is worth collecting; at Go's
// default the collector ran 1-2 times a commit and took about a tenth of
// its CPU. Counted from the runtime's GC trace, not timed.
func TestCommitSmallNoCollection(t *testing.T) {
	bin := cairnBinary(t)
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.json")
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":"user","n":` + strconv.Itoa(i) + `,"content":"` + strings.Repeat("step text ", 25) + `"}`)
	}
	b.WriteString(`]}`)
	if err := os.WriteFile(doc, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= 2; step++ {
		cmd := exec.Command(bin, "--store", filepath.Join(dir, "store"), "commit", "s", "--json-file", doc)
		cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1", "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "GOGC=", "GOMEMLIMIT=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("commit %d: %v\n%s", step, err, out)
		}
		gcs := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "gc ") {
				gcs++
			}
		}
		if gcs != 0 {
			t.Errorf("commit %d of a %d KB document ran %d collections, want 0:\n%s", step, b.Len()>>10, gcs, out)
		}
	}
}

// TestMadeBinaryStatic: the binary `make build` and `make install` make
// has no dynamic loader to run (CGO_ENABLED=0): it starts on any Linux
// of its architecture, a container image without libc included, and
// about 1 ms sooner a process. Checked on the binary make test hands
// over in $CAIRN_BIN.
func TestMadeBinaryStatic(t *testing.T) {
	bin := os.Getenv("CAIRN_BIN")
	if bin == "" || runtime.GOOS != "linux" {
		t.Skip("checks the binary make builds ($CAIRN_BIN), on Linux")
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("open %s: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s is dynamically linked (it names a program interpreter): build it with CGO_ENABLED=0", bin)
		}
	}
}
