package cairn_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// TestHeadCacheSameSecondRebuild: on S3 an object's time has one-second
// resolution, so a store wiped and rebuilt within the second its session
// was created gives the session a marker of the same size and time. A
// commit through the head cache saved before the wipe used to take that
// for the same session and write step 3 with the old store's step 2 as
// its parent (a step the rebuilt store does not hold). It must read the
// head from the store and build on the rebuilt store's own step 2.
func TestHeadCacheSameSecondRebuild(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	const prefix = "rebuilt"
	url := fmt.Sprintf("minio://%s/%s/%s?secure=false", b.Host, b.Name, prefix)
	raw, err := minio.Open(ctx, b.Name, prefix, minio.Options{
		Endpoint: b.Host, Region: b.Region, AccessKey: b.AccessKey, SecretKey: b.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	commit := func(session string, cached bool, doc string) *cairn.Step {
		t.Helper()
		ws, err := cairn.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if cached {
			ws.UseHeadCache(cache)
		}
		s, err := ws.Session(session)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	markerTime := func(session string) int64 {
		t.Helper()
		i, err := raw.Stat(ctx, manifest.SessionKey(session))
		if err != nil {
			t.Fatal(err)
		}
		return i.ModTime.Unix()
	}
	for attempt := 1; attempt <= 5; attempt++ {
		session := fmt.Sprintf("s%d", attempt)
		// Start early in a second, so that all of it fits in one.
		for time.Now().Nanosecond() > 100e6 {
			time.Sleep(10 * time.Millisecond)
		}
		commit(session, true, `{"store":"old","n":1}`)
		commit(session, true, `{"store":"old","n":2}`)
		before := markerTime(session)
		var keys []string
		if err := raw.List(ctx, "", "", func(i cas.Info) error { keys = append(keys, i.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if err := raw.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		commit(session, false, `{"store":"new","n":1}`)
		two := commit(session, false, `{"store":"new","n":2}`)
		if markerTime(session) != before {
			t.Logf("attempt %d: the rebuild's marker fell in another second; again", attempt)
			continue
		}
		st := commit(session, true, `{"store":"new","n":3}`)
		if st.Number != 3 || st.Parent == nil || st.Parent.ID != two.ID.String() {
			t.Fatalf("commit through the cache after the rebuild made step %d with parent %v, want step 3 above the rebuilt store's step 2 (%v)", st.Number, st.Parent, two.ID)
		}
		ws, err := cairn.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := ws.Verify(ctx, session); err != nil || len(rep.Problems) != 0 {
			t.Fatalf("verify after the rebuild: %+v, %v", rep, err)
		}
		return
	}
	t.Fatal("no attempt rebuilt the store within one second")
}
