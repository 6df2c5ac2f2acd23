package export_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/export"
)

// failAfterFirstPut lets one Put through once armed, then fails the
// rest: a session's first commit writes its marker, then its step, so
// the session is left listed with no step, as a crash between the two
// leaves it.
type failAfterFirstPut struct {
	cas.Store
	armed atomic.Int32 // puts left to let through, once armed; -1: off
}

func (s *failAfterFirstPut) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if s.armed.Load() >= 0 && s.armed.Add(-1) < 0 {
		return errors.New("injected: the machine died here")
	}
	return s.Store.Put(ctx, key, data, opts)
}

// TestPreferenceBesideAMarkedSessionWithNoStep: a session whose first
// commit died between its marker and its step is listed but holds no
// step. The chat formats pass over it; preference failed the whole
// export with "session has no steps" once FirstStep reported such a
// session as not found, exporting no pair.
func TestPreferenceBesideAMarkedSessionWithNoStep(t *testing.T) {
	ctx := context.Background()
	st := &failAfterFirstPut{Store: mem.New()}
	st.armed.Store(-1)
	ws := cairn.OpenStore(st)
	commit := func(name, rec string) error {
		s, err := ws.Session(name)
		if err != nil {
			return err
		}
		_, err = s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: []byte(rec)})
		return err
	}
	if err := commit("a", `{"messages":[{"role":"user","content":"q"}]}`); err != nil {
		t.Fatal(err)
	}
	fork(ctx, t, ws, "a@1", "b")
	for name, rec := range map[string]string{
		"a": `{"messages":[{"role":"assistant","content":"bad"}],"outcome":"failure"}`,
		"b": `{"messages":[{"role":"assistant","content":"good"}],"outcome":"success"}`,
	} {
		if err := commit(name, rec); err != nil {
			t.Fatal(err)
		}
	}
	st.armed.Store(1)
	if err := commit("e", `{"messages":[{"role":"user","content":"lost"}]}`); err == nil {
		t.Fatal("the commit of e landed; want it to die after its marker")
	}
	st.armed.Store(-1)
	if names, err := ws.SessionNames(ctx); err != nil || len(names) != 3 {
		t.Fatalf("sessions %v, %v; want a, b and the marked e", names, err)
	}
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 1 {
		t.Fatalf("%d pairs, want 1: %s", sum.Pairs, out)
	}
}
