package cairn

import (
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// State is an agent state to commit: a JSON document or a directory.
type State interface {
	build(sink tree.Sink) (manifest.StateKind, tree.Ref, error)
}

type jsonState []byte

func (j jsonState) build(sink tree.Sink) (manifest.StateKind, tree.Ref, error) {
	ref, err := tree.BuildJSON(j, sink)
	return manifest.StateJSON, ref, err
}

// JSON returns a state that is one JSON document. It is stored
// structurally, so handing over the whole document every step costs only
// what changed; it reads back in compact form with key order and number
// text kept exactly.
func JSON(doc []byte) State { return jsonState(doc) }

type dirState string

func (d dirState) build(sink tree.Sink) (manifest.StateKind, tree.Ref, error) {
	ref, err := tree.BuildDir(string(d), sink)
	return manifest.StateDir, ref, err
}

// Dir returns a state that is the directory tree at path: regular files,
// executables, subdirectories and symlinks.
func Dir(path string) State { return dirState(path) }

// Status is the state of the agent loop after a step.
type Status = manifest.Status

// Statuses.
const (
	Running       = manifest.Running
	AwaitingInput = manifest.AwaitingInput
	Done          = manifest.Done
)

// ParseStatus parses "running", "awaiting_input" or "done".
func ParseStatus(s string) (Status, error) { return manifest.ParseStatus(s) }
