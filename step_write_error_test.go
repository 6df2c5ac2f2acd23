package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// diskFullWriter fails every write, as a full disk does.
type diskFullWriter struct{}

var errDiskFull = errors.New("no space left on device")

func (diskFullWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// TestWriteJSONWriterFailureSaidAsWrite: a WriteJSON whose writer fails
// says the writer's error as the writer said it, not as a failed read:
// `cairn show s > /dev/full` said "read s@1: write /dev/stdout: no space
// left on device", sending the user to look at the store.
func TestWriteJSONWriterFailureSaidAsWrite(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	st, err := s.Commit(ctx, cairn.JSON([]byte(`{"big":"`+strings.Repeat("x", 100_000)+`"}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = st.WriteJSON(ctx, diskFullWriter{})
	if !errors.Is(err, errDiskFull) || strings.Contains(err.Error(), "read") {
		t.Fatalf("WriteJSON into a full disk: %v; want it said as the write's failure", err)
	}
}
