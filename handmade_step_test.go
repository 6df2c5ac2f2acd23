package cairn_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestStepNotReadFromAWorkspace: a Step built by hand (the zero Step, or
// one decoded from JSON by a program that saved a step's fields) has no
// state to read. Its methods crashed the program (ParentStep, Log,
// StateID), or said a JSON step's state was a directory (JSON); each is
// now ErrInvalid, and committing StateOf it is refused before anything
// is read.
func TestStepNotReadFromAWorkspace(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	real := stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
	b, err := json.Marshal(real)
	if err != nil {
		t.Fatal(err)
	}
	decoded := new(cairn.Step)
	if err := json.Unmarshal(b, decoded); err != nil {
		t.Fatal(err)
	}
	for name, st := range map[string]*cairn.Step{"the zero Step": {}, "a Step decoded from JSON": decoded} {
		t.Run(name, func(t *testing.T) {
			calls := map[string]func() error{
				"JSON":       func() error { _, err := st.JSON(ctx); return err },
				"WriteJSON":  func() error { return st.WriteJSON(ctx, new(bytesSink)) },
				"Files":      func() error { _, err := st.Files(ctx); return err },
				"Checkout":   func() error { return st.Checkout(ctx, t.TempDir()) },
				"ParentStep": func() error { _, err := st.ParentStep(ctx); return err },
				"Log":        func() error { return st.Log(ctx, func(*cairn.Step) error { return nil }) },
				"Commit StateOf": func() error {
					_, err := s.Commit(ctx, cairn.StateOf(st), cairn.CommitOptions{})
					return err
				},
			}
			for call, f := range calls {
				err := func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s panicked: %v", call, r)
						}
					}()
					return f()
				}()
				if !errors.Is(err, cairn.ErrInvalid) {
					t.Errorf("%s: %v; want ErrInvalid", call, err)
				}
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("StateID panicked: %v", r)
					}
				}()
				if st.StateID() == real.StateID() {
					t.Errorf("StateID of a step with no state equals the state of %s", real)
				}
			}()
		})
	}
	if h, err := s.Head(ctx); err != nil || h.Number != 1 {
		t.Errorf("head after the refused commits: %v, %v; want s@1", h, err)
	}
}

type bytesSink struct{ n int }

func (b *bytesSink) Write(p []byte) (int, error) { b.n += len(p); return len(p), nil }
