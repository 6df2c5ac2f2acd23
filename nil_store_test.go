package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
)

// A workspace opened over no store fails every call with ErrInvalid,
// saying so, rather than panicking at its first request.
func TestOpenStoreNil(t *testing.T) {
	ctx := context.Background()
	w := cairn.OpenStore(nil)
	defer w.Close()
	s, err := w.Session("s")
	if err == nil {
		_, err = s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{})
	}
	if !errors.Is(err, cairn.ErrInvalid) {
		t.Fatalf("commit on OpenStore(nil): %v, want ErrInvalid", err)
	}
	if _, err := w.SessionNames(ctx); !errors.Is(err, cairn.ErrInvalid) {
		t.Fatalf("sessions on OpenStore(nil): %v, want ErrInvalid", err)
	}
}
