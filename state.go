package cairn

import (
	"errors"
	"fmt"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/realpath"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// State is an agent state to commit: a JSON document (JSON), a directory
// (Dir), or an existing step's state (StateOf).
type State interface {
	// build stores the state through sink; known reports which blobs the
	// session's parent step already holds (see manifest.CommitInput.Build).
	build(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, error)
}

type jsonState []byte

func (j jsonState) build(sink tree.Sink, _ func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
	// Through a Doc, as a commit builds it (Session.buildState): the
	// same root, and a document that is not UTF-8 refused as a commit
	// refuses it. StateIDOf gave such a document an ID.
	ref, err := tree.NewDoc().Build(j, sink)
	return manifest.StateJSON, ref, err
}

// JSON returns a state that is one JSON document. It is stored
// structurally, so handing over the whole document every step costs only
// what changed; it reads back in compact form with key order and number
// text kept exactly. The document must be UTF-8, as JSON must be: a
// commit checks what changed since the session's previous document (the
// whole document the first time) and refuses invalid UTF-8 with an error
// wrapping ErrInvalid that gives its offset.
func JSON(doc []byte) State { return jsonState(doc) }

type dirState string

func (d dirState) build(sink tree.Sink, _ func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
	path, err := resolveDir(string(d))
	if err != nil {
		return 0, tree.Ref{}, err
	}
	ref, err := tree.BuildDir(path, sink)
	return manifest.StateDir, ref, err
}

// resolveDir returns where the system takes the directory path, once,
// as the state is built or a checkout starts (realpath.Resolve: a ".."
// after a symbolic link applied to the link's target, as the kernel
// does, not to the path's text), so that the names read or written
// below it are joined onto the directory the kernel opens.
func resolveDir(path string) (string, error) {
	if path == "" {
		return "", invalid(errors.New("no directory given (an empty path)"))
	}
	resolved, err := realpath.Resolve(path)
	if err != nil {
		return "", fmt.Errorf("directory %s: %w", path, err)
	}
	return resolved, nil
}

// MaxJSONDepth is how deeply a JSON state may nest arrays and objects (a
// directory state, directories): a commit refuses a deeper one with an
// error wrapping ErrInvalid, since readers stop there.
const MaxJSONDepth = tree.MaxDepth

// Dir returns a state that is the directory tree at path: regular files,
// executables, subdirectories and symlinks. The path is taken as the
// system takes it, once, when the state is built (a commit, StateIDOf):
// relative to the current directory then, with its symbolic links
// followed and a ".." after a link applied to the link's target, as the
// kernel does (link/.. is the parent of the link's target, not the
// link's own directory). A symbolic link inside the tree is stored as a
// link, not followed.
func Dir(path string) State { return dirState(path) }

// Kind says what a step's state is.
type Kind uint8

// State kinds. Their values are the stored ones (TestStoredValues).
const (
	KindJSON Kind = 1 // one JSON document
	KindDir  Kind = 2 // a directory tree
)

// String returns "json" or "dir".
func (k Kind) String() string { return manifest.StateKind(k).String() }

// Status is the state of the agent loop after a step.
type Status uint8

// Statuses. Their values are the stored ones (TestStoredValues).
const (
	Running       Status = 0
	AwaitingInput Status = 1
	Done          Status = 2
)

// String returns "running", "awaiting_input" or "done".
func (s Status) String() string { return manifest.Status(s).String() }

// ParseStatus parses "running", "awaiting_input" or "done".
func ParseStatus(s string) (Status, error) {
	st, err := manifest.ParseStatus(s)
	if err != nil {
		return 0, invalid(err)
	}
	return Status(st), nil
}

// stepState is the state of an existing step, committed again unchanged.
type stepState struct{ st *Step }

func (s stepState) build(tree.Sink, func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
	return s.st.m.Kind, s.st.m.Root, nil
}

// StateOf returns step st's state, to commit it unchanged as the next
// step of st's session: a step that only adds a record, such as a human's
// reply to a question. It reads and writes no blobs. Commit refuses it
// unless st is the head of the session it is committed to, because only
// then does the new step's layout already hold every blob it uses.
func StateOf(st *Step) State { return stepState{st} }

// checkReuse refuses a StateOf state whose step is not the head.
func checkReuse(state State, head *manifest.Step) error {
	ss, ok := state.(stepState)
	if !ok {
		return nil
	}
	// The step as read from the store decides, not its exported fields,
	// which a caller may have set: a state committed after a step that
	// is not the head would name blobs the new step's layout lacks.
	m := ss.st.m
	if head == nil || head.ID != m.ID {
		err := fmt.Errorf("state of %s@%d can only be committed as the next step after it", m.Session, m.Number)
		if head != nil && m.Session == head.Session && m.Number < head.Number {
			// It was the head once: another step landed above it since.
			return &kindError{kind: ErrConflict, err: fmt.Errorf("%w, and the session's head is now step %d", err, head.Number)}
		}
		return invalid(err)
	}
	return nil
}
