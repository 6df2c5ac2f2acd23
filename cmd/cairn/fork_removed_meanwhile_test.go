package main

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	casfs "github.com/cairnlog/cairn/cas/fs"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/s3test"
)

// removeOnPin is the store a test hands the next removeonpin:// URL:
// cairn fork's first put of a fork pin removes session remove first,
// as a `cairn rm` landing while the fork runs, after it read its step.
var removeOnPin struct {
	sync.Mutex
	store  cas.Store
	remove string
	gc     bool // and run gc twice, as if an hour went by each time
	err    error
}

type removingStore struct{ cas.Store }

func (s removingStore) Put(ctx context.Context, key string, data []byte, o cas.PutOptions) error {
	removeOnPin.Lock()
	name := removeOnPin.remove
	if strings.HasPrefix(key, "pins/") && name != "" {
		removeOnPin.remove = ""
		ws := cairn.OpenStore(s.Store)
		_, removeOnPin.err = ws.Remove(ctx, name)
		for i := 1; i <= 2 && removeOnPin.gc && removeOnPin.err == nil; i++ {
			_, removeOnPin.err = ws.GC(ctx, cairn.GCOptions{Grace: 0, Now: time.Now().Add(time.Duration(i) * time.Hour)})
		}
	}
	removeOnPin.Unlock()
	return s.Store.Put(ctx, key, data, o)
}

func init() {
	cas.Register("removeonpin", cas.Backend{Open: func(context.Context, *url.URL) (cas.Store, error) {
		removeOnPin.Lock()
		defer removeOnPin.Unlock()
		return removingStore{removeOnPin.store}, nil
	}})
}

// TestForkOfRemovedSessionSaysRemoved: a fork of r@N that read its step,
// and then found r removed before it wrote its own (a cairn rm between
// the two) said "not found: r@2: pruned (the session's history starts at
// step 7)", on every store, with or without gc since (c@5's round runs
// it): nothing was pruned. A fork of a removed session's step that starts after the
// removal says "the session was removed", as show and log do; so does
// this one now, with their exit code.
func TestForkOfRemovedSessionSaysRemoved(t *testing.T) {
	ctx := context.Background()
	stores := map[string]func(t *testing.T) cas.Store{
		"local": func(t *testing.T) cas.Store {
			st, err := casfs.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		"minio": func(t *testing.T) cas.Store {
			b := s3test.StartMinIO(t)
			st, err := minio.Open(ctx, b.Name, "fork-removed", minio.Options{
				Endpoint: b.Host, Region: b.Region, AccessKey: b.AccessKey, SecretKey: b.SecretKey,
			})
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			ws := cairn.OpenStore(st)
			for _, ref := range []string{"a@1", "b@3", "c@5"} {
				session := sessionOf(ref)
				s, _ := ws.Session(session)
				for i := 0; i < 5; i++ {
					if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				removeOnPin.Lock()
				removeOnPin.store, removeOnPin.remove, removeOnPin.err = st, session, nil
				removeOnPin.gc = session == "c"
				removeOnPin.Unlock()
				_, errs, code := cli(t, "removeonpin://", "", "fork", ref, "fork-of-"+session)
				if removeOnPin.err != nil {
					t.Fatalf("rm %s beside the fork: %v", session, removeOnPin.err)
				}
				// What show says of that step now, and its exit code.
				_, words, want := cli(t, "removeonpin://", "", "show", ref)
				if want != 1 || !strings.Contains(words, "step "+ref+" not found: the session was removed") {
					t.Fatalf("show %s of the removed session: exit %d, %q", ref, want, words)
				}
				if code != want || strings.Contains(errs, "pruned") || !strings.Contains(errs, "step "+ref+" not found: the session was removed") {
					t.Errorf("fork %s as %s is removed: exit %d, %q; want exit %d saying the session was removed, as show does (%q)", ref, session, code, errs, want, words)
				}
			}
		})
	}
}
