package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// TestSlotAgeS3: gc deletes a step object only once it is
// manifest.SlotFenceAge old, judged from the listing's modification time,
// and takes a zero one for "too young". So every backend's List must
// report LastModified, else pruned steps would never be freed. On MinIO
// and versitygw, each through s3:// (aws-sdk-go-v2) and minio://
// (minio-go): every listed object has a modification time close to the
// test's clock; gc on the real clock keeps the pruned steps and counts
// them as young_steps; gc on a clock SlotFenceAge on deletes exactly
// those, and the session still reads back.
func TestSlotAgeS3(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
			t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
			t.Setenv("AWS_REGION", b.Region)
			t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
			for _, u := range []string{
				fmt.Sprintf("s3://%s/sdk?endpoint=%s&region=%s", b.Name, url.QueryEscape(b.Endpoint), b.Region),
				fmt.Sprintf("minio://%s/%s/mgo?secure=false&region=%s", b.Host, b.Name, b.Region),
			} {
				t.Run(strings.SplitN(u, ":", 2)[0], func(t *testing.T) { testSlotAge(t, u) })
			}
		})
	}
}

func testSlotAge(t *testing.T, storeURL string) {
	ctx := context.Background()
	start := time.Now()
	ws, err := cairn.Open(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.Session("d")
	if err != nil {
		t.Fatal(err)
	}
	// Past a compaction (every 32 steps), so that the pruned steps are
	// named by no live layout and really are gc's to free.
	const steps, keep = 40, 3
	var last []byte
	for i := 1; i <= steps; i++ {
		last = []byte(fmt.Sprintf(`{"i":%d,"msg":%q}`, i, strings.Repeat(fmt.Sprint(i), 200)))
		if _, err := s.Commit(ctx, cairn.JSON(last), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Prune(ctx, "d", keep); err != nil {
		t.Fatal(err)
	}

	// The backend itself, under no wrapper: every object has a time.
	u, _ := url.Parse(storeURL)
	be, ok := cas.Lookup(u.Scheme)
	if !ok {
		t.Fatalf("no backend for %s", u.Scheme)
	}
	raw, err := be.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	stepKeys := map[string]bool{}
	var n int
	err = raw.List(ctx, "", "", func(i cas.Info) error {
		n++
		if i.ModTime.IsZero() || i.ModTime.Before(start.Add(-5*time.Minute)) || i.ModTime.After(time.Now().Add(5*time.Minute)) {
			t.Errorf("listing: %s has modification time %v (test began %v)", i.Key, i.ModTime, start)
		}
		if _, _, slot := manifest.ParseStepKey(i.Key); slot {
			stepKeys[i.Key] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stepKeys) != steps {
		t.Fatalf("listing found %d step objects of %d objects; want %d", len(stepKeys), n, steps)
	}
	if info, err := raw.Stat(ctx, manifest.StepKey("d", 1)); err != nil || info.ModTime.IsZero() {
		t.Errorf("stat of step 1: %+v, %v; want a modification time", info, err)
	}

	// On the real clock: the pruned steps are candidates, but young.
	var young int
	for run := 1; run <= 2; run++ {
		rep, err := ws.GC(ctx, cairn.GCOptions{Grace: 0})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range rep.DeletedKeys {
			if strings.HasPrefix(k, "steps/") {
				t.Errorf("gc run %d on the real clock deleted %s; want step objects kept until SlotFenceAge", run, k)
			}
		}
		t.Logf("gc run %d, real clock: %d objects, %d live steps, %d candidates, %d young steps, %d deleted", run, rep.Objects, rep.LiveSteps, rep.Candidates, rep.YoungSteps, rep.Deleted)
		young = rep.YoungSteps
	}
	if young == 0 || young > steps-keep {
		t.Fatalf("gc on the real clock counted %d young steps; want the pruned ones (1..%d of them)", young, steps-keep)
	}
	for k := range stepKeys {
		if _, err := raw.Stat(ctx, k); err != nil {
			t.Errorf("%s after gc on the real clock: %v; want it kept", k, err)
		}
	}

	// SlotFenceAge on: the same steps go, in two runs at most.
	aged := time.Now().Add(manifest.SlotFenceAge + time.Minute)
	var deleted []string
	for run := 1; run <= 2; run++ {
		rep, err := ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: aged})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("gc run %d, clock +%v: %d candidates, %d young steps, %d deleted", run, manifest.SlotFenceAge+time.Minute, rep.Candidates, rep.YoungSteps, rep.Deleted)
		if rep.YoungSteps != 0 {
			t.Errorf("gc run %d on a clock %v on: %d young steps; want none", run, manifest.SlotFenceAge, rep.YoungSteps)
		}
		for _, k := range rep.DeletedKeys {
			if sess, num, slot := manifest.ParseStepKey(k); slot {
				if sess != "d" || num > steps-keep {
					t.Errorf("gc deleted %s, a live step", k)
				}
				deleted = append(deleted, k)
			}
		}
	}
	sort.Strings(deleted)
	if len(deleted) != young {
		t.Fatalf("gc on a clock %v on deleted %d step objects (%v); want the %d young ones", manifest.SlotFenceAge, len(deleted), deleted, young)
	}
	for _, k := range deleted {
		if _, err := raw.Stat(ctx, k); !errors.Is(err, cas.ErrNotFound) {
			t.Errorf("%s after gc deleted it: %v; want not found", k, err)
		}
	}
	// The session reads back whole.
	head, err := ws.Resolve(ctx, "d")
	if err != nil || head.Number != steps {
		t.Fatalf("head after gc: %v, %v", head, err)
	}
	if got, err := head.JSON(ctx); err != nil || string(got) != string(last) {
		t.Fatalf("head's state after gc: %s, %v; want %s", got, err, last)
	}
	rep, err := ws.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 {
		t.Fatalf("verify after gc: %+v", rep.Problems)
	}
}
