package cairn_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// TestResumeIsConstant: finding the head of a session from a fresh
// workspace costs the same requests whether the session has 1,000, 10,000
// or 100,000 steps: the hint GET and one LIST (of at most HintEvery keys)
// to find it, one GET to read it. 1,000 and 10,000 steps are on MinIO,
// 100,000 on the in-memory store (and on MinIO too with
// CAIRN_RESUME_100K_MINIO=1). The requests are counted by the metered
// store directly above the backend: one counted call is one S3 request.
//
// Each session's first 40 steps are committed through Session.Commit; the
// rest are written by extend, in parallel, as the step objects Commit
// writes for a loop whose state stays the same (a new record each step).
// After the measurement the fresh workspace commits one more step.
// With -short only the 1,000-step session would run (s3test skips MinIO
// tests in -short mode anyway).
func TestResumeIsConstant(t *testing.T) {
	b := s3test.StartMinIO(t)
	ctx := context.Background()
	memStore := mem.New()
	type scaleCase struct {
		steps uint64
		where string
		open  func() cas.Store // a new client on the session's store
	}
	cases := []scaleCase{
		{1_000, "minio", func() cas.Store { return openMinIOStore(t, b, "scale-1000") }},
		{10_000, "minio", func() cas.Store { return openMinIOStore(t, b, "scale-10000") }},
		// 100,000 step objects take MinIO about 5 minutes to store on 2 cores
		// (10,000 take about 30 s), too long for make test: the same
		// requests are counted on the in-memory store, and on MinIO only
		// when CAIRN_RESUME_100K_MINIO=1.
		{100_000, "mem", func() cas.Store { return memStore }},
	}
	if os.Getenv("CAIRN_RESUME_100K_MINIO") == "1" {
		cases = append(cases, scaleCase{100_000, "minio", func() cas.Store { return openMinIOStore(t, b, "scale-100000") }})
	}
	if testing.Short() {
		cases = cases[:1]
	}
	const committed = 40 // steps committed through Session.Commit, past a head hint
	doc := []byte(`{"goal":"summarise the corpus","notes":["a","b"],"plan":{"next":"read","budget":1.50}}`)
	var first metered.Counts
	for i, c := range cases {
		size := c.steps
		store := c.open()
		ws := cairn.OpenStore(store)
		s := mustSession(t, ws, "long")
		start := time.Now()
		for n := 1; n <= committed; n++ {
			if _, err := s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{Record: fmt.Appendf(nil, `{"n":%d}`, n)}); err != nil {
				t.Fatal(err)
			}
		}
		extend(t, store, "long", committed, size)
		build := time.Since(start)

		// A fresh workspace, as in another process: nothing cached.
		meter := metered.New(c.open())
		start = time.Now()
		n, err := manifest.NewRepo(meter, 0).FindHead(ctx, "long")
		find := meter.Counts()
		if err != nil || n != size {
			t.Fatalf("%d steps: FindHead = %d, %v", size, n, err)
		}
		fresh := cairn.OpenStore(meter)
		before := meter.Counts()
		head, err := mustSession(t, fresh, "long").Head(ctx)
		if err != nil || head.Number != size || head.Parent == nil || head.Parent.Number != size-1 {
			t.Fatalf("%d steps: head = %+v, %v", size, head, err)
		}
		resume := meter.Counts().Sub(before)
		took := time.Since(start)
		got, err := head.JSON(ctx)
		if err != nil || string(got) != string(doc) {
			t.Fatalf("%d steps: head state = %s, %v", size, got, err)
		}
		state := meter.Counts().Sub(before).Sub(resume)
		checkChainTail(t, fresh, "long", size, 64)
		if i == 0 {
			first = resume
			rep, err := fresh.Verify(ctx, "long")
			if err != nil || len(rep.Problems) > 0 || rep.Steps != int(size) {
				t.Fatalf("verify %d steps: %+v %v", size, rep, err)
			}
		}
		if find.Put != 0 || find.Get != 1 || find.List != 1 || find.Head != 0 {
			t.Fatalf("%d steps: finding the head took %+v, want 1 GET and 1 LIST", size, find)
		}
		if resume.Put != 0 || resume.Get != 2 || resume.List != 1 || resume.Head != 0 {
			t.Fatalf("%d steps: resuming took %+v, want 2 GETs and 1 LIST", size, resume)
		}
		if resume.Get != first.Get || resume.List != first.List {
			t.Fatalf("%d steps: resuming took %+v, but %d steps took %+v", size, resume, cases[0].steps, first)
		}
		// The resumed session continues: one PUT, its parent's blobs are
		// already known from reading the state.
		before = meter.Counts()
		next, err := mustSession(t, fresh, "long").Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{})
		cont := meter.Counts().Sub(before)
		if err != nil || next.Number != size+1 || next.Parent == nil || next.Parent.ID != head.ID.String() {
			t.Fatalf("%d steps: continuing: %+v %v", size, next, err)
		}
		if cont.Put != 1 || cont.Get != 0 || cont.List != 0 || cont.Head != 0 {
			t.Fatalf("%d steps: continuing took %+v, want 1 PUT", size, cont)
		}
		t.Logf("%7d steps on %-5s (built in %v): find head %d GET + %d LIST; resume (find + read head) %d GET + %d LIST in %v; read its state %d GET; commit step %d: %d PUT",
			size, c.where, build.Round(time.Millisecond), find.Get, find.List, resume.Get, resume.List, took.Round(time.Microsecond), state.Get, next.Number, cont.Put)
	}
}

func mustSession(t *testing.T, ws *cairn.Workspace, name string) *cairn.Session {
	t.Helper()
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openMinIOStore(t *testing.T, b *s3test.Bucket, prefix string) cas.Store {
	t.Helper()
	st, err := minio.Open(context.Background(), b.Name, prefix, minio.Options{
		Endpoint: b.Host, Region: b.Region, AccessKey: b.AccessKey, SecretKey: b.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkChainTail checks that the last k steps of session, whose head is
// step head, each name the one before by its hash, and that step 1, if
// among them, has no parent.
func checkChainTail(t *testing.T, ws *cairn.Workspace, session string, head, k uint64) {
	t.Helper()
	ctx := context.Background()
	s := mustSession(t, ws, session)
	var child *cairn.Step
	for n := head; n > 0 && n > head-k; n-- {
		st, err := s.Step(ctx, n)
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		if child != nil && (child.Parent == nil || child.Parent.Session != session || child.Parent.Number != n || child.Parent.ID != st.ID.String()) {
			t.Fatalf("step %d names parent %+v, but step %d is %s", child.Number, child.Parent, n, st.ID)
		}
		if n == 1 && st.Parent != nil {
			t.Fatalf("step 1 names parent %+v", st.Parent)
		}
		child = st
	}
}

// extend writes steps from+1..to of session after its step from, as
// Session.Commit writes them for an unchanged state: step from's state
// and layout, a record per step, each manifest naming its parent's hash,
// and the head hint Commit leaves behind. The manifests are chained in
// order; the objects are put in parallel.
func extend(t *testing.T, store cas.Store, session string, from, to uint64) {
	t.Helper()
	ctx := context.Background()
	repo := manifest.NewRepo(store, 0)
	base, err := repo.ReadStep(ctx, session, from)
	if err != nil {
		t.Fatal(err)
	}
	work := make(chan *manifest.Manifest, 256)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range work {
				if _, _, err := repo.WriteStep(ctx, m, nil); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	prev := base.Pointer()
	for n := from + 1; n <= to; n++ {
		m := *base.Manifest
		parent := prev
		m.Number, m.Parent, m.Time = n, &parent, time.Now().UTC()
		m.Record = fmt.Appendf(nil, `{"n":%d}`, n)
		work <- &m
		prev = manifest.Pointer{Session: session, Number: n, ID: cas.Sum(m.Encode())}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	if err := repo.WriteHint(ctx, session, to/manifest.HintEvery*manifest.HintEvery); err != nil {
		t.Fatal(err)
	}
}
