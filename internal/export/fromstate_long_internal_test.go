package export

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/cairnlog/cairn"
)

// stateElements reads the conversation of a state as it is written out,
// and what it finds must be what c.elements finds reading it whole:
// regular states, a list of another kind, nulls on the way, keys spelt
// otherwise, an ADK version that is zero, a string or comes after the
// events, states of another shape.
func TestStateElementsAsWhole(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("s")
	cases := []struct {
		c     stateChat
		state string
	}{
		{langGraphChat{}, `{"thread_id":"t","channels":{"a":{"x":[1,{"y":"]"}]},"messages":{"value":{"json":[{"role":"user","content":"hi"},{"type":"ai","content":"yo"}],"z":1}},"b":2},"zz":[]}`},
		{langGraphChat{}, `{"channels":{"messages":{"value":{"json":[]}}}}`},
		{langGraphChat{}, `{"channels":{"messages":{"value":{"json":"text"}}}}`},
		{langGraphChat{}, `{"channels":{"messages":{"value":{"json":{"a":1}}}}}`},
		{langGraphChat{}, `{"channels":{"messages":{"value":{"json":null}}}}`},
		{langGraphChat{}, `{"channels":{"messages":{"value":null}}}`},
		{langGraphChat{}, `{"channels":{"messages":null}}`},
		{langGraphChat{}, `{"channels":null}`},
		{langGraphChat{}, `{"channels":"x"}`},
		{langGraphChat{}, `{"channels":{"messages":[1]}}`},
		{langGraphChat{}, `{"Channels":{"messages":{"value":{"json":[{"role":"user","content":"hi"}]}}}}`},
		{langGraphChat{}, `{"channels":{"Messages":{"value":{"json":[{"role":"user","content":"hi"}]}}}}`},
		{langGraphChat{}, `{"other":1}`},
		{langGraphChat{}, `[1,2]`},
		{langGraphChat{}, `"x"`},
		{adkChat{}, `{"adk_session":1,"app":"a","events":[{"ID":"e1"},{"ID":"e2","Content":{"role":"user"}}],"state":{}}`},
		{adkChat{}, `{"adk_session":1,"events":[]}`},
		{adkChat{}, `{"adk_session":0,"events":[{"ID":"e1"}]}`},
		{adkChat{}, `{"adk_session":"1","events":[{"ID":"e1"}]}`},
		{adkChat{}, `{"adk_session":1.5,"events":[{"ID":"e1"}]}`},
		{adkChat{}, `{"adk_session":null,"events":[{"ID":"e1"}]}`},
		{adkChat{}, `{"adk_session":2,"events":null}`},
		{adkChat{}, `{"adk_session":2,"events":{"a":1}}`},
		{adkChat{}, `{"adk_session":2}`},
		{adkChat{}, `{"events":[{"ID":"e1"}]}`},
		{adkChat{}, `{"Adk_Session":1,"events":[{"ID":"e1"}]}`},
		{adkChat{}, `{"adk_session":1,"Events":[{"ID":"e1"}]}`},
		{adkChat{}, `{"app":"a","user":"u"}`},
	}
	for i, c := range cases {
		st, err := s.Commit(ctx, cairn.JSON([]byte(c.state)), cairn.CommitOptions{Record: []byte(fmt.Sprintf(`{"adk":"event","event":"e%d"}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		state, err := st.JSON(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, _, werr := c.c.elements(state)
		var got []json.RawMessage
		broken, err := stateElements(ctx, c.c, st, func(el json.RawMessage) error {
			got = append(got, el)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.state, err)
		}
		wantBroken, gotBroken := "", ""
		if werr != nil {
			wantBroken = fmt.Sprintf("%s: %v", c.c.where(st.Record), werr)
		}
		if broken != nil {
			gotBroken = broken.Error()
		}
		if len(got) == 0 && len(want) == 0 {
			got, want = nil, nil
		}
		if !reflect.DeepEqual(got, want) || gotBroken != wantBroken {
			t.Errorf("%s: read as written out %s (broken %q), whole %s (broken %q)", c.state, got, gotBroken, want, wantBroken)
		}
	}
}
