package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// decodeStrict decodes b, one JSON object that this package wrote (a fork
// pin, gc's saved state), into v, refusing unknown fields and anything
// after the object. Its error says in words what is wrong with the
// object ("it is cut short", "it is not JSON at byte 1"), never
// encoding/json's text, which names Go types and parser states: callers
// put it after the object's name.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tm *time.ParseError
	switch {
	case err == nil:
	case len(bytes.TrimSpace(b)) == 0:
		return errors.New("it is empty")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("it is cut short")
	case errors.As(err, &syntax):
		return fmt.Errorf("it is not JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Errorf("its field %q holds a JSON %s, which is not what cairn writes there", typ.Field, typ.Value)
	case errors.As(err, &tm):
		return fmt.Errorf("it holds %q where a time belongs", tm.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("it has a field cairn does not write, %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return errors.New("it is not what cairn writes there")
	}
	if dec.More() {
		return errors.New("it has more after its end")
	}
	return nil
}
