package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// The head cache (issue 14, target 7): a `cairn commit` in a fresh
// process, on a machine that committed the session's previous step, makes
// one PUT and no GET or LIST, and a stale cache costs a retry, never a
// wrong parent. Each "machine" is a process environment with its own
// home (and so its own $XDG_CACHE_HOME/cairn), on one shared store.

type machine struct {
	t   *testing.T
	bin string
	env []string
}

// localMachine returns a machine with a fresh home on the local store
// at store.
func localMachine(t *testing.T, bin, store string) *machine {
	t.Helper()
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CAIRN_") || strings.HasPrefix(name, "XDG_") || name == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_CACHE_HOME="+home+"/cache", "XDG_DATA_HOME="+home+"/data", "CAIRN_STORE="+store)
	return &machine{t: t, bin: bin, env: env}
}

// minioMachine returns a machine with a fresh home on bucket b.
func minioMachine(t *testing.T, bin string, b *s3test.Bucket, prefix string) *machine {
	t.Helper()
	env := append(processEnv(t, b, t.TempDir()),
		fmt.Sprintf("CAIRN_STORE=minio://%s/%s/%s?secure=false", b.Host, b.Name, prefix))
	return &machine{t: t, bin: bin, env: env}
}

func (m *machine) run(stdin string, args ...string) (string, string, int) {
	m.t.Helper()
	return runIn(m.t, m.bin, m.env, stdin, args...)
}

// must runs cairn and fails the test unless it exits 0.
func (m *machine) must(stdin string, args ...string) string {
	m.t.Helper()
	out, errs, code := m.run(stdin, args...)
	if code != 0 {
		m.t.Fatalf("cairn %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

// commit commits doc to session and returns what commit --json printed.
func (m *machine) commit(session, doc string, extra ...string) commitResult {
	m.t.Helper()
	out := m.must(doc, append([]string{"commit", session, "-", "--json"}, extra...)...)
	var r commitResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		m.t.Fatalf("commit --json printed %q: %v", out, err)
	}
	return r
}

// logEntry is one line of `cairn log --json`.
type logEntry struct {
	Step   uint64  `json:"step"`
	ID     string  `json:"id"`
	Parent *string `json:"parent"`
}

// log returns the session's steps, newest first; `cairn log` follows
// each parent pointer and checks its hash, so a wrong parent fails it.
func (m *machine) log(session string) []logEntry {
	m.t.Helper()
	var steps []logEntry
	for _, line := range strings.Split(strings.TrimSpace(m.must("", "log", session, "--json")), "\n") {
		var e logEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			m.t.Fatalf("log line %q: %v", line, err)
		}
		steps = append(steps, e)
	}
	return steps
}

// checkHead fails unless the session's head is step n with parent
// session@n-1, its state is doc, and verify finds nothing wrong.
func (m *machine) checkHead(session string, n uint64, doc string) {
	m.t.Helper()
	steps := m.log(session)
	if steps[0].Step != n {
		m.t.Fatalf("head of %s is step %d, want %d", session, steps[0].Step, n)
	}
	if want := fmt.Sprintf("%s@%d", session, n-1); n > 1 && (steps[0].Parent == nil || *steps[0].Parent != want) {
		m.t.Fatalf("parent of %s@%d is %v, want %s", session, n, steps[0].Parent, want)
	}
	if got := strings.TrimSpace(m.must("", "show", fmt.Sprintf("%s@%d", session, n))); got != doc {
		m.t.Fatalf("%s@%d reads %s, want %s", session, n, got, doc)
	}
	if out, errs, code := m.run("", "verify"); code != 0 {
		m.t.Fatalf("verify: exit %d: %s%s", code, out, errs)
	}
}

func docN(i int) string {
	return fmt.Sprintf(`{"step":%d,"notes":["a","b","c"],"big":"%s"}`, i, strings.Repeat("x", 2000+i))
}

// testOnePut: the second commit in a fresh process makes exactly one PUT
// and one GET (of the cached head's manifest, to check the store still
// holds it), no LIST or HEAD; so does every later one below a compaction.
func testOnePut(t *testing.T, a *machine) {
	if r := a.commit("s", docN(1)); r.Step != 1 {
		t.Fatalf("first commit made step %d", r.Step)
	}
	for i := 2; i <= 4; i++ {
		r := a.commit("s", docN(i))
		if r.Step != uint64(i) {
			t.Fatalf("commit %d made step %d", i, r.Step)
		}
		if r.Requests.Put != 1 || r.Requests.Get != 1 || r.Requests.List != 0 || r.Requests.Head != 0 {
			t.Fatalf("commit of step %d in a fresh process made %+v, want 1 PUT, 1 GET, 0 LIST, 0 HEAD", i, r.Requests)
		}
	}
	a.checkHead("s", 4, docN(4))
}

func TestCLICommitOnePutLocal(t *testing.T) {
	testOnePut(t, localMachine(t, cairnBinary(t), t.TempDir()))
}

func TestCLICommitOnePutMinIO(t *testing.T) {
	b := s3test.StartMinIO(t)
	testOnePut(t, minioMachine(t, cairnBinary(t), b, "oneput"))
}

// TestHeadCacheAnotherMachineMovedOn: A's cache says 2, B takes the
// session to 5. Without --expect A's commit lands at 6 with parent 5;
// with --expect 2 it fails with exit 3 as it would without a cache.
func TestHeadCacheAnotherMachineMovedOn(t *testing.T) {
	bin, store := cairnBinary(t), t.TempDir()
	a, b := localMachine(t, bin, store), localMachine(t, bin, store)
	for _, s := range []string{"free", "expect"} {
		a.commit(s, docN(1))
		a.commit(s, docN(2))
		for i := 3; i <= 5; i++ {
			b.commit(s, docN(i))
		}
	}
	r := a.commit("free", docN(6))
	if r.Step != 6 {
		t.Fatalf("A committed step %d over a stale cache, want 6", r.Step)
	}
	a.checkHead("free", 6, docN(6))
	// The retry refreshed A's cache: its next commit is one PUT again.
	if r := a.commit("free", docN(7)); r.Step != 7 || r.Requests.Get != 1 || r.Requests.List != 0 {
		t.Fatalf("commit after the retry: step %d, %+v", r.Step, r.Requests)
	}

	_, errs, code := a.run(docN(6), "commit", "expect", "-", "--expect", "2")
	if code != 3 || !strings.Contains(errs, "expected head 2, but the head is 5") {
		t.Fatalf("commit --expect 2 over a stale cache: exit %d: %s (want exit 3, expected head 2, but the head is 5)", code, errs)
	}
	a.checkHead("expect", 5, docN(5))
}

// TestHeadCacheRemovedSession: a session removed (and collected) on
// another machine behaves for a machine with a cache exactly as for one
// without.
func TestHeadCacheRemovedSession(t *testing.T) {
	bin := cairnBinary(t)
	for _, gc := range []bool{false, true} {
		t.Run(fmt.Sprintf("gc=%v", gc), func(t *testing.T) {
			type outcome struct {
				code int
				errs string
				log  string
			}
			var got [2]outcome
			for i, cacheDir := range []string{"", "off"} {
				store := t.TempDir()
				a, b := localMachine(t, bin, store), localMachine(t, bin, store)
				if cacheDir != "" {
					a.env = append(a.env, "CAIRN_CACHE_DIR="+cacheDir)
				}
				a.commit("s", docN(1))
				a.commit("s", docN(2))
				b.must("", "rm", "s")
				if gc {
					b.must("", "gc", "--grace", "0s")
					b.must("", "gc", "--grace", "0s")
				}
				_, errs, code := a.run(docN(3), "commit", "s", "-")
				lg, _, _ := a.run("", "log", "s")
				got[i] = outcome{code, errs, stripLog(lg)}
				if out, errs, code := a.run("", "verify"); code != 0 {
					t.Fatalf("verify: exit %d: %s%s", code, out, errs)
				}
			}
			if got[0] != got[1] {
				t.Fatalf("with the head cache: %+v\nwithout: %+v", got[0], got[1])
			}
		})
	}
}

// stripLog keeps the step numbers and statuses of `cairn log` output,
// dropping ids and times, which differ between two runs.
func stripLog(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 {
			out = append(out, f[3]+" "+f[4])
		}
	}
	return strings.Join(out, "\n")
}

// TestHeadCacheWipedStore: the store is wiped and rebuilt at the same
// place by another machine, with a history as long as A's cached one
// and a shorter one. A's next commit builds on the new history.
func TestHeadCacheWipedStore(t *testing.T) {
	bin := cairnBinary(t)
	for _, rebuilt := range []int{3, 1} {
		t.Run(fmt.Sprintf("rebuilt=%d", rebuilt), func(t *testing.T) {
			store := t.TempDir()
			a, b := localMachine(t, bin, store), localMachine(t, bin, store)
			for i := 1; i <= 3; i++ {
				a.commit("s", docN(i))
			}
			if err := os.RemoveAll(store); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= rebuilt; i++ {
				b.commit("s", fmt.Sprintf(`{"other":%d}`, i))
			}
			r := a.commit("s", docN(9))
			if r.Step != uint64(rebuilt+1) {
				t.Fatalf("A committed step %d on the rebuilt store, want %d", r.Step, rebuilt+1)
			}
			a.checkHead("s", uint64(rebuilt+1), docN(9))
		})
	}
}

// TestHeadCacheCorruptFile: a damaged, truncated, foreign or oversized
// cache file, the head file or its base, is ignored: the commit reads the
// store and lands right.
func TestHeadCacheCorruptFile(t *testing.T) {
	bin := cairnBinary(t)
	damage := map[string]func([]byte) []byte{
		"flipped":   func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b },
		"truncated": func(b []byte) []byte { return b[:len(b)/2] },
		"empty":     func([]byte) []byte { return nil },
		"garbage":   func([]byte) []byte { return bytes.Repeat([]byte("cairn"), 100) },
		"oversized": func(b []byte) []byte { return append(b, make([]byte, 65<<20)...) },
	}
	for _, which := range []string{"head", "base"} {
		for name, f := range damage {
			t.Run(which+"/"+name, func(t *testing.T) {
				store := t.TempDir()
				a := localMachine(t, bin, store)
				a.commit("s", docN(1))
				a.commit("s", docN(2))
				heads := filepath.Join(envValue(a.env, "XDG_CACHE_HOME"), "cairn", "heads")
				bases, _ := filepath.Glob(filepath.Join(heads, "*.base.head"))
				all, _ := filepath.Glob(filepath.Join(heads, "*.head"))
				if len(bases) != 1 || len(all) != 2 {
					t.Fatalf("want one head cache file and its base, found %v", all)
				}
				file := bases[0]
				if which == "head" {
					file = all[0]
					if file == bases[0] {
						file = all[1]
					}
				}
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, f(data), 0o600); err != nil {
					t.Fatal(err)
				}
				if r := a.commit("s", docN(3)); r.Step != 3 {
					t.Fatalf("commit over a %s cache %s file made step %d", name, which, r.Step)
				}
				a.checkHead("s", 3, docN(3))
				// The good cache it wrote serves the next commit.
				if r := a.commit("s", docN(4)); r.Step != 4 || r.Requests.Get != 1 || r.Requests.List != 0 {
					t.Fatalf("commit after repair: step %d, %+v", r.Step, r.Requests)
				}
			})
		}
	}
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// TestHeadCacheGCBetweenCommits: prune and gc run between two commits of
// a machine with a cache. The next commit dedups only against objects of
// the head's layout, which prune and gc keep: every step reads back.
func TestHeadCacheGCBetweenCommits(t *testing.T) {
	bin := cairnBinary(t)
	store := t.TempDir()
	a, b := localMachine(t, bin, store), localMachine(t, bin, store)
	// Past one compaction (fanout 32): the layout names a pack.
	for i := 1; i <= 40; i++ {
		a.commit("s", docN(i))
	}
	b.must("", "prune", "s", "--keep-last", "1")
	b.must("", "gc", "--grace", "0s")
	b.must("", "gc", "--grace", "0s")
	// The same document as the head: every blob deduplicated against
	// the cached index.
	if r := a.commit("s", docN(40)); r.Step != 41 || r.Requests.Get != 1 {
		t.Fatalf("commit after gc: step %d, %+v", r.Step, r.Requests)
	}
	a.checkHead("s", 41, docN(40))
	b.must("", "gc", "--grace", "0s")
	b.must("", "gc", "--grace", "0s")
	a.checkHead("s", 41, docN(40))
}

// TestHeadCacheRacingProcesses: two processes of one machine (one cache
// directory) commit to one session at once without --expect. Every
// commit lands, the steps form one chain, and each reads back.
func TestHeadCacheRacingProcesses(t *testing.T) {
	const each = 15
	bin := cairnBinary(t)
	a := localMachine(t, bin, t.TempDir())
	a.commit("s", docN(0))
	var wg sync.WaitGroup
	errs := make(chan string, 2*each)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				cmd := exec.Command(bin, "commit", "s", "-")
				cmd.Env = a.env
				cmd.Stdin = strings.NewReader(docN(100*(w+1) + i))
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Sprintf("writer %d commit %d: %v: %s", w, i, err, out)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	// A writer may lose the slot to the other twice in a row (once from
	// its cache, once from the store's head): a conflict, exit 3, as
	// without a cache. Nothing else may fail.
	failed := 0
	for e := range errs {
		if !strings.Contains(e, "exit status 3") {
			t.Fatal(e)
		}
		failed++
	}
	steps := a.log("s")
	if want := uint64(1 + 2*each - failed); steps[0].Step != want || len(steps) != int(want) {
		t.Fatalf("head %d with %d steps after %d commits (%d conflicts), want %d", steps[0].Step, len(steps), 2*each+1, failed, want)
	}
	for _, st := range steps {
		a.must("", "show", fmt.Sprintf("s@%d", st.Step))
	}
	if out, errs, code := a.run("", "verify"); code != 0 {
		t.Fatalf("verify: exit %d: %s%s", code, out, errs)
	}
}

// TestHeadCacheOtherWritersOfThisMachine: a step written on the same
// machine by a process that keeps no head cache (CAIRN_CACHE_DIR=off)
// costs the next cached commit a retry, not a conflict; a `cairn reply`
// keeps the cache, so the commit after it is one PUT again.
func TestHeadCacheOtherWritersOfThisMachine(t *testing.T) {
	bin := cairnBinary(t)
	a := localMachine(t, bin, t.TempDir())
	off := &machine{t: t, bin: bin, env: append(append([]string(nil), a.env...), "CAIRN_CACHE_DIR=off")}
	a.commit("s", docN(1))
	a.commit("s", docN(2))
	off.commit("s", docN(3))
	if r := a.commit("s", docN(4)); r.Step != 4 {
		t.Fatalf("commit after an uncached one made step %d, want 4", r.Step)
	}
	a.checkHead("s", 4, docN(4))

	a.commit("s", docN(5), "--status", "awaiting_input")
	a.must("", "reply", "s", "--input", `{"ok":true}`)
	if r := a.commit("s", docN(7)); r.Step != 7 || r.Requests.Put != 1 || r.Requests.Get != 1 || r.Requests.List != 0 {
		t.Fatalf("commit after a reply: step %d, %+v", r.Step, r.Requests)
	}
	a.checkHead("s", 7, docN(7))
}
