package cairn

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

type patchState []byte

func (patchState) build(tree.Sink, func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
	return 0, tree.Ref{}, invalid(errors.New("a patch is committed through a session"))
}

// Patch returns a state that is the session's head document with the
// RFC 6902 JSON Patch ops applied: a JSON array of operations (add,
// including "/-" to append to an array, remove, replace, move, copy and
// test). The step stores exactly what committing the patched document
// would, but costs only the paths the operations touch, whatever the
// document's size. A patch that fails in any operation commits nothing
// and returns an error wrapping ErrInvalid that names the operation, as
// "patch op 2 (remove /messages/7): no element 7 (the array has 5)";
// operations are numbered from 1. A patch that is not UTF-8 is refused
// (ErrInvalid) before any operation applies; the head's document is not
// checked. As copy can double a document with each operation, a patch
// may make the document at most twice as long as it and the patch
// together, with 1 MiB to spare (ErrInvalid), and no longer than the
// workspace's MaxValueBytes (ErrLimit); see docs/limits.md.
func Patch(ops []byte) State { return patchState(ops) }

// buildState stores state through sink. For JSON it goes through the
// session's held document, staged: the caller commits or rolls back the
// returned doc, which is returned with any error once staged.
func (s *Session) buildState(ctx context.Context, state State, sink tree.Sink) (manifest.StateKind, tree.Ref, *tree.Doc, error) {
	switch st := state.(type) {
	case jsonState:
		doc := s.heldDoc()
		if doc == nil {
			doc = tree.NewDoc()
		}
		ref, err := doc.Build(st, sink)
		return manifest.StateJSON, ref, doc, err
	case patchState:
		if err := checkUTF8(st); err != nil {
			return 0, tree.Ref{}, nil, invalid(fmt.Errorf("patch: %w", err))
		}
		doc, err := s.patchDoc(ctx)
		if err != nil {
			return 0, tree.Ref{}, nil, err
		}
		ref, err := doc.Patch(st, sink, s.ws.treeLimits().MaxBytes)
		return manifest.StateJSON, ref, doc, err
	}
	kind, ref, err := state.build(sink, nil)
	return kind, ref, nil, err
}

// checkUTF8 refuses text that is not UTF-8, as JSON must be, naming the
// first bad byte. A patch is checked whole before any operation applies,
// so that what it adds is UTF-8; the head's stored document it applies
// to is not checked (commits before the check stored such documents, and
// they must stay patchable).
func checkUTF8(text []byte) error {
	if i := tree.InvalidUTF8(text); i >= 0 {
		return fmt.Errorf("not UTF-8 (byte %#02x at offset %d)", text[i], i)
	}
	return nil
}

// heldDoc returns the held document if it is the head's state.
func (s *Session) heldDoc() *tree.Doc {
	if s.doc == nil || s.head == nil || s.head.Manifest.Kind != manifest.StateJSON {
		return nil
	}
	if root, ok := s.doc.Root(); !ok || !root.Equal(s.head.Manifest.Root) {
		return nil
	}
	return s.doc
}

// patchDoc returns the head's document to patch, read from the store if
// this writer does not hold it.
func (s *Session) patchDoc(ctx context.Context) (*tree.Doc, error) {
	if s.head == nil || s.removed {
		// A removed session's head is its tombstone, whose state is
		// none of the session's.
		return nil, invalid(errors.New("patch: the session has no state to patch yet"))
	}
	if doc := s.heldDoc(); doc != nil {
		return doc, nil
	}
	if s.head.Manifest.Kind != manifest.StateJSON {
		return nil, invalid(errors.New("patch: the head's state is not a JSON document"))
	}
	text, err := newStep(s.ws, s.head).JSON(ctx)
	if err != nil {
		return nil, fmt.Errorf("patch: read the head's document: %w", err)
	}
	doc := tree.NewDoc()
	// Not checked for UTF-8: documents stored before commits checked it
	// must stay patchable.
	root, err := doc.BuildStored(text, discard{})
	if err != nil {
		return nil, fmt.Errorf("patch: parse the head's document: %w", err)
	}
	doc.Commit()
	if !root.Equal(s.head.Manifest.Root) {
		return nil, fmt.Errorf("patch: %w: the head's document does not rebuild to its stored root", cas.ErrCorrupt)
	}
	return doc, nil
}

// discard is a sink that stores nothing: building through it yields a
// state's root without storing a blob (the head's blobs are stored;
// StateIDOf only hashes).
type discard struct{}

func (discard) Put(cas.ID, []byte) error { return nil }
