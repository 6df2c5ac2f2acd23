package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCommitRecordRefusesInvalidUTF8: the Go API refused a JSON document
// that is not UTF-8 but stored such a step record, which cairn export
// then wrote, byte for byte, into JSONL that is not UTF-8 (cairn reply
// committed one that way). A record is refused as a document is, and
// nothing is written.
func TestCommitRecordRefusesInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	_, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Record: []byte(`{"reply":"` + "\xff" + `"}`)})
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "step record: not UTF-8") {
		t.Fatalf("record with byte 0xff: %v; want ErrInvalid saying the step record is not UTF-8", err)
	}
	if _, err := s.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("after the refused commit: head %v", err)
	}
}
