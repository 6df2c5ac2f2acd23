package cairn

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestWireRecordMirrorsRecord: records are parsed in one pass through
// wireRecord, wireMessage and wireToolCall, mirrors of Record, Message
// and ToolCall. A field added to one of those and not to its mirror
// would be dropped by that fast parse (silently: the differential tests
// only see fields their samples hold), so each mirror must read every
// JSON member its type reads.
func TestWireRecordMirrorsRecord(t *testing.T) {
	members := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Fatalf("%s.%s has no JSON name", typ.Name(), f.Name)
			}
			out = append(out, name)
		}
		return out
	}
	for _, pair := range []struct{ typ, wire reflect.Type }{
		{reflect.TypeFor[Record](), reflect.TypeFor[wireRecord]()},
		{reflect.TypeFor[Message](), reflect.TypeFor[wireMessage]()},
		{reflect.TypeFor[ToolCall](), reflect.TypeFor[wireToolCall]()},
	} {
		have := members(pair.wire)
		for _, m := range members(pair.typ) {
			if !slices.Contains(have, m) {
				t.Errorf("%s reads the member %q, which %s, its one-pass parse, does not", pair.typ.Name(), m, pair.wire.Name())
			}
		}
	}
}
