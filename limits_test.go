package cairn_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestMaintenanceObeysMaxObjectBytes: gc (a dry run, too) and du read
// step objects through the same bounded reader as every other read. A
// store holding a step object above the workspace's MaxObjectBytes makes
// them fail with ErrLimit, having read no more than the limit of it,
// instead of reading the whole object.
func TestMaintenanceObeysMaxObjectBytes(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	writer := cairn.OpenStore(store)
	s, err := writer.Session("big")
	if err != nil {
		t.Fatal(err)
	}
	// About 3 MiB of incompressible text in the head's step object.
	noise := make([]byte, 3<<19)
	rand.Read(noise)
	doc := []byte(`{"blob":"` + hex.EncodeToString(noise) + `"}`)
	if _, err := s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	const limit = 1 << 20
	for _, op := range []struct {
		name string
		run  func(*cairn.Workspace) error
	}{
		{"gc --dry-run", func(ws *cairn.Workspace) error {
			_, err := ws.GC(ctx, cairn.GCOptions{DryRun: true})
			return err
		}},
		{"gc", func(ws *cairn.Workspace) error {
			_, err := ws.GC(ctx, cairn.GCOptions{Grace: 0})
			return err
		}},
		{"du", func(ws *cairn.Workspace) error {
			_, err := ws.Usage(ctx)
			return err
		}},
	} {
		ws := cairn.OpenStore(store)
		ws.SetLimits(cairn.Limits{MaxObjectBytes: limit})
		err := op.run(ws)
		if !errors.Is(err, cairn.ErrLimit) {
			t.Errorf("%s over a step object above the limit: err = %v, want ErrLimit", op.name, err)
		}
		if read := ws.Requests().BytesRead; read > limit+1 {
			t.Errorf("%s read %d bytes, more than the limit of %d", op.name, read, limit)
		}
	}
	// Nothing was deleted: the step still reads back whole.
	head, err := cairn.OpenStore(store).ReadHead(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := head.JSON(ctx); err != nil || len(got) != len(doc) {
		t.Fatalf("after gc: state of %d bytes, %v", len(got), err)
	}
}

// TestDefaultsMatchTheLayersBelow: the defaults the API documents are
// the ones the protocol and tree packages apply.
func TestDefaultsMatchTheLayersBelow(t *testing.T) {
	if got, want := cairn.DefaultLimits.MaxObjectBytes, int64(manifest.DefaultMaxObjectBytes); got != want {
		t.Errorf("DefaultLimits.MaxObjectBytes = %d, manifest says %d", got, want)
	}
	if got, want := cairn.DefaultLimits.MaxValueBytes, tree.DefaultLimits.MaxBytes; got != want {
		t.Errorf("DefaultLimits.MaxValueBytes = %d, tree says %d", got, want)
	}
	if got, want := cairn.DefaultLimits.MaxDepth, tree.DefaultLimits.MaxDepth; got != want {
		t.Errorf("DefaultLimits.MaxDepth = %d, tree says %d", got, want)
	}
	if got, want := cairn.DefaultCompactionFanout, manifest.DefaultFanout; got != want {
		t.Errorf("DefaultCompactionFanout = %d, manifest says %d", got, want)
	}
}

// TestStoredValues: the API's enumerations convert to and from the
// stored ones by value.
func TestStoredValues(t *testing.T) {
	for _, c := range []struct{ got, want uint8 }{
		{uint8(cairn.KindJSON), uint8(manifest.StateJSON)},
		{uint8(cairn.KindDir), uint8(manifest.StateDir)},
		{uint8(cairn.Running), uint8(manifest.Running)},
		{uint8(cairn.AwaitingInput), uint8(manifest.AwaitingInput)},
		{uint8(cairn.Done), uint8(manifest.Done)},
		{uint8(cairn.ModeFile), tree.ModeFile},
		{uint8(cairn.ModeExec), tree.ModeExec},
		{uint8(cairn.ModeSymlink), tree.ModeSymlink},
		{uint8(cairn.ModeDir), tree.ModeDir},
	} {
		if c.got != c.want {
			t.Errorf("value %d, stored as %d", c.got, c.want)
		}
	}
	for _, c := range []struct{ got, want string }{
		{string(cairn.Added), string(tree.Added)},
		{string(cairn.Removed), string(tree.Removed)},
		{string(cairn.Changed), string(tree.Changed)},
		{cairn.KindJSON.String(), "json"},
		{cairn.AwaitingInput.String(), "awaiting_input"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
