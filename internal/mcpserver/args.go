package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

// argSpec is what checkArgs knows of a tool's arguments.
type argSpec struct {
	schema *jsonschema.Schema
	// types: check each argument's JSON type against the schema (the
	// SDK would, in its own words); off for a tool that reads its
	// arguments itself and takes more than its schema says.
	types bool
}

// checkArgs is middleware that answers a tools/call whose arguments the
// tool cannot take with a tool error in the arguments' words, before
// the SDK, which says it in terms of schemas and Go types ("validating
// root: validating /properties/step: type: 1.5 has type \"number\"",
// "Go struct field mcpserver.ResumeIn.step of type uint64") or, for an
// argument given twice or spelled in another case, takes the last.
func checkArgs(specs map[string]argSpec) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" || call.Params == nil {
				return next(ctx, method, req)
			}
			spec, ok := specs[call.Params.Name]
			if !ok {
				return next(ctx, method, req)
			}
			if err := spec.check(call.Params.Name, call.Params.Arguments); err != nil {
				var res mcp.CallToolResult
				res.SetError(err)
				return &res, nil
			}
			call.Params.Arguments = spec.withoutNulls(call.Params.Arguments)
			return next(ctx, method, req)
		}
	}
}

// check returns an error in the arguments' words if raw is not what the
// tool takes: a JSON object of its arguments, each once, spelled as in
// its schema, of the schema's types, with the required ones present.
func (a argSpec) check(tool string, raw json.RawMessage) error {
	names := a.names()
	if err := unicodeText("arguments", raw); err != nil {
		return err
	}
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		trimmed = "{}"
	}
	if trimmed[0] != '{' || !json.Valid([]byte(trimmed)) {
		return fmt.Errorf("arguments: want a JSON object with %s, not %s", strings.Join(names, ", "), clip([]byte(trimmed)))
	}
	seen := map[string]bool{}
	for _, m := range jsontext.Members([]byte(trimmed)) {
		p := a.schema.Properties[m.Name]
		if p == nil {
			return fmt.Errorf("unknown argument %s (%s takes %s; names are case-sensitive)", termtext.Quote(m.Name), tool, strings.Join(names, ", "))
		}
		if seen[m.Name] {
			return fmt.Errorf("argument %s is given twice; give each argument once", termtext.Quote(m.Name))
		}
		seen[m.Name] = true
		if a.types && a.leftOut(m) {
			continue // withoutNulls drops it
		}
		if a.types {
			if err := checkType(m.Name, p, m.Value); err != nil {
				return err
			}
		}
	}
	for _, r := range a.schema.Required {
		if !seen[r] {
			return fmt.Errorf("%s is required: %s", r, describe(a.schema.Properties[r]))
		}
	}
	return nil
}

// withoutNulls returns the arguments raw, which check took, without the
// optional ones given as null: LLM clients send null for an argument
// they do not mean to give, as checkpoint and the HTTP API take it, and
// the SDK would refuse it against the schema's type. It returns raw
// itself when there is none, or when the tool reads its arguments itself.
func (a argSpec) withoutNulls(raw json.RawMessage) json.RawMessage {
	if !a.types {
		return raw
	}
	ms := jsontext.Members(raw)
	kept := make([]string, 0, len(ms))
	for _, m := range ms {
		if a.leftOut(m) {
			continue
		}
		name, _ := json.Marshal(m.Name)
		kept = append(kept, string(name)+":"+string(m.Value))
	}
	if len(kept) == len(ms) {
		return raw
	}
	return json.RawMessage("{" + strings.Join(kept, ",") + "}")
}

// leftOut reports whether m is an optional argument given as null,
// which the tool takes as not given.
func (a argSpec) leftOut(m jsontext.Member) bool {
	return string(m.Value) == "null" && !slices.Contains(a.schema.Required, m.Name)
}

func (a argSpec) names() []string {
	var names []string
	for n := range a.schema.Properties {
		names = append(names, n)
	}
	// The schema's order is lost in its map; required ones first, then
	// by name, so a message lists them the same way every time.
	req := map[string]bool{}
	for _, r := range a.schema.Required {
		req[r] = true
	}
	slices.SortFunc(names, func(x, y string) int {
		if req[x] != req[y] {
			if req[x] {
				return -1
			}
			return 1
		}
		return strings.Compare(x, y)
	})
	return names
}

// checkType returns an error naming argument name unless the JSON value v
// is of a type schema p allows (and, for an integer, within its minimum
// and the range the tool reads).
func checkType(name string, p *jsonschema.Schema, v []byte) error {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if len(types) == 0 {
		return nil
	}
	kind := jsonKind(v)
	for _, t := range types {
		if t == kind || t == "number" && kind == "integer" {
			if kind != "integer" {
				return nil
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("%s: want %s, not %s (too large)", name, describe(p), clip(v))
			}
			if p.Minimum != nil && float64(n) < *p.Minimum {
				return fmt.Errorf("%s: want %s, not %s", name, describe(p), v)
			}
			return nil
		}
	}
	if kind == "null" {
		// Only a required argument gets here (check takes null for an
		// optional one as left out).
		return fmt.Errorf("%s: want %s, not null", name, describe(p))
	}
	return fmt.Errorf("%s: want %s, not %s", name, describe(p), clip(v))
}

// jsonKind names the JSON type of the valid JSON value v as a schema does.
func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if strings.ContainsAny(string(v), ".eE") {
		return "number"
	}
	return "integer"
}

// describe says what schema p takes, in words: "an integer >= 1 (the
// step number)".
func describe(p *jsonschema.Schema) string {
	if p == nil {
		return "a value"
	}
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	var ws []string
	for _, t := range types {
		w := map[string]string{
			"string": "a string", "integer": "an integer", "number": "a number",
			"boolean": "true or false", "object": "a JSON object", "array": "a JSON array",
		}[t]
		if w == "" {
			continue
		}
		if (t == "integer" || t == "number") && p.Minimum != nil {
			w += fmt.Sprintf(" >= %g", *p.Minimum)
		}
		ws = append(ws, w)
	}
	d := strings.Join(ws, " or ")
	if d == "" {
		d = "a value"
	}
	if p.Description != "" {
		d += " (" + p.Description + ")"
	}
	return d
}

// sessionArg returns an error in the arguments' words if name is not a
// valid session name.
func sessionArg(arg, name string) error {
	if cairn.ValidSession(name) != nil {
		return fmt.Errorf("%s %s: want a session name, %s", arg, termtext.Quote(name), cairn.SessionNameRule)
	}
	return nil
}

// refArg returns an error in the arguments' words if ref is not SESSION
// or SESSION@N with N >= 1: a bad session name as every argument's, a
// bad step number as cairn.ParseRef says it.
func refArg(arg, ref string) error {
	name, _, _ := strings.Cut(ref, "@")
	if err := sessionArg(arg, name); err != nil {
		return err
	}
	if _, _, err := cairn.ParseRef(ref); err != nil {
		return fmt.Errorf("%s: %w", arg, err)
	}
	return nil
}
