package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestCallerMistakesMatchTheirKind: a mistake of the caller's is
// ErrInvalid and a session that does not exist ErrNotFound, as the
// sentinels' doc says every such error is, said in the caller's words.
// A checkout into a directory that is not empty, a file, or a path
// below a file matched no kind (the last two said "mkdir …: not a
// directory"); so did a directory state that is a file; Record.Validate
// and MarshalRecord of a record breaking the convention matched none;
// StateIDOf gave an ID to a JSON document that is not UTF-8, which a
// commit refuses; a directory state that does not exist was said as
// "stat DIR: no such file or directory";
// FirstStep of a session with no steps said "session has no steps"
// without naming it; and Usage and Verify of a bad name gave another
// text of the name rule than SessionNameRule.
func TestCallerMistakesMatchTheirKind(t *testing.T) {
	ctx := context.Background()
	_, w, s, st := oneStep(t)
	full := t.TempDir()
	file := filepath.Join(full, "f")
	writeTestFile(t, file, []byte("x"))

	for _, c := range []struct {
		call  string
		err   error
		kind  error
		words string
	}{
		{"checkout into a directory that is not empty", st.Checkout(ctx, full), cairn.ErrInvalid, "is not empty"},
		{"checkout into a file", st.Checkout(ctx, file), cairn.ErrInvalid, "is a file, not a directory"},
		{"checkout below a file", st.Checkout(ctx, filepath.Join(file, "sub")), cairn.ErrInvalid, "a part of its path is a file"},
		{"StateIDOf a directory state that is a file", func() error { _, err := cairn.StateIDOf(cairn.Dir(file)); return err }(), cairn.ErrInvalid, "not a directory"},
		{"StateIDOf a directory state that does not exist", func() error {
			_, err := cairn.StateIDOf(cairn.Dir(filepath.Join(full, "nope")))
			return err
		}(), cairn.ErrInvalid, "nope: it does not exist"},
		{"commit of a directory state that is a file", func() error {
			_, err := s.Commit(ctx, cairn.Dir(file), cairn.CommitOptions{})
			return err
		}(), cairn.ErrInvalid, "not a directory"},
		{"StateIDOf a document that is not UTF-8", func() error { _, err := cairn.StateIDOf(cairn.JSON([]byte("\"\xff\""))); return err }(), cairn.ErrInvalid, "not UTF-8"},
		{"Validate", (&cairn.Record{Agent: &cairn.Agent{}}).Validate(), cairn.ErrInvalid, "agent has no name"},
		{"MarshalRecord", func() error {
			_, err := cairn.MarshalRecord(&cairn.Record{Messages: []cairn.Message{{Role: "robot"}}})
			return err
		}(), cairn.ErrInvalid, `role "robot"`},
		{"FirstStep of a session with no steps", func() error { _, err := w.FirstStep(ctx, "nope"); return err }(), cairn.ErrNotFound, "session nope not found: it has no steps"},
		{"Usage of a bad name", func() error { _, err := w.Usage(ctx, "../x"); return err }(), cairn.ErrInvalid, cairn.SessionNameRule},
		{"Verify of a bad name", func() error { _, err := w.Verify(ctx, "../x"); return err }(), cairn.ErrInvalid, cairn.SessionNameRule},
	} {
		if !errors.Is(c.err, c.kind) || !strings.Contains(c.err.Error(), c.words) {
			t.Errorf("%s: %v; want %v saying %q", c.call, c.err, c.kind, c.words)
		}
		if c.err != nil && (strings.Contains(c.err.Error(), "mkdir") || strings.Contains(c.err.Error(), "stat ")) {
			t.Errorf("%s: %v; want it in words, not a system call's", c.call, c.err)
		}
	}
	if des, err := os.ReadDir(full); err != nil || len(des) != 1 {
		t.Errorf("the directories refused were written to: %v, %v", des, err)
	}
	if h, err := s.Head(ctx); err != nil || h.Number != 1 {
		t.Errorf("head after the refused commit: %v, %v; want s@1", h, err)
	}
}
