package export

import (
	"bytes"
	"testing"

	"github.com/cairnlog/cairn"
)

// writePair writes a pair a message at a time; the line is what
// encoding the whole pair at once writes, as export wrote it before.
func TestWritePairIsOneJSONValue(t *testing.T) {
	msgs := []cairn.Message{
		{Role: "system", Content: "be <brief> & right"},
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []cairn.ToolCall{{ID: "c1", Name: "ls", Arguments: []byte(`{"x":1}`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "ls", Content: "a\nb"},
		{Role: "assistant", Content: "done", Reasoning: "r"},
	}
	for _, c := range []struct{ prompt, chosen, rejected []cairn.Message }{
		{msgs[:2], msgs[2:], msgs[4:]},
		{nil, msgs[4:], msgs},
	} {
		var got bytes.Buffer
		if err := writePair(&got, messages{held: c.prompt}, messages{held: c.chosen}, messages{held: c.rejected}); err != nil {
			t.Fatal(err)
		}
		want, err := textJSON(struct {
			Prompt   []openAIMessage `json:"prompt"`
			Chosen   []openAIMessage `json:"chosen"`
			Rejected []openAIMessage `json:"rejected"`
		}{openAIMessages(c.prompt), openAIMessages(c.chosen), openAIMessages(c.rejected)})
		if err != nil {
			t.Fatal(err)
		}
		if want = append(want, '\n'); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("writePair wrote\n%s\nwant\n%s", got.Bytes(), want)
		}
	}
}
