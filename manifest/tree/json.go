package tree

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Thresholds of the structural JSON encoding.
const (
	// SmallContainer: an object or array whose compact text is at most
	// this long is stored as one blob (or inline) instead of as a node.
	SmallContainer = 1024
	// ChunkString: a string token longer than this is split by the
	// content-defined chunker instead of stored as one blob.
	ChunkString = 64 << 10
	// MaxDepth bounds JSON nesting.
	MaxDepth = 512
)

// ErrSyntax reports a document that is not valid JSON.
var ErrSyntax = errors.New("invalid JSON")

// jval is a parsed value: its span in the compact text and, for a
// container, its children (object children alternate key, value).
type jval struct {
	start, end int
	kind       byte // '{', '[', '"', or 's' (other scalar)
	kids       []jval
}

type jsonParser struct {
	in    []byte
	pos   int
	out   []byte // compact text
	depth int
}

// Compact returns doc in compact form: insignificant white space removed,
// every token kept exactly. It fails with ErrSyntax on invalid JSON.
func Compact(doc []byte) ([]byte, error) {
	p := &jsonParser{in: doc, out: make([]byte, 0, len(doc))}
	if _, err := p.parseDoc(); err != nil {
		return nil, err
	}
	return p.out, nil
}

func (p *jsonParser) parseDoc() (jval, error) {
	v, err := p.value()
	if err != nil {
		return v, err
	}
	p.ws()
	if p.pos != len(p.in) {
		return v, p.errorf("unexpected data after the document")
	}
	return v, nil
}

// ErrTooDeep reports a JSON document nested deeper than MaxDepth: valid
// JSON, but more than a state may hold.
var ErrTooDeep = errors.New("nested too deep")

// tooDeep is the error of a document nested deeper than MaxDepth at
// offset pos.
func tooDeep(pos int) error {
	return fmt.Errorf("%w: more than %d levels at offset %d, the most a state may hold", ErrTooDeep, MaxDepth, pos)
}

func (p *jsonParser) errorf(format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrSyntax, p.pos, fmt.Sprintf(format, a...))
}

// byteOrderMark is U+FEFF in UTF-8, which some editors put first in a
// file; JSON text must not start with it (RFC 8259, section 8.1).
var byteOrderMark = []byte{0xEF, 0xBB, 0xBF}

// unexpected says what the byte at pos of in is, where no value starts:
// a byte order mark by name, a character as the character it is (its
// first byte alone is another letter in Latin-1), a byte that is no
// UTF-8 by its value.
func unexpected(in []byte, pos int) string {
	if pos == 0 && bytes.HasPrefix(in, byteOrderMark) {
		return "a byte order mark (U+FEFF) before the value, which JSON does not allow: save the text as UTF-8 without one"
	}
	r, n := utf8.DecodeRune(in[pos:])
	if r == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("unexpected byte 0x%02x", in[pos])
	}
	return fmt.Sprintf("unexpected character %q", r)
}

// endOfInput says that in ended where a value was wanted: said as empty
// if it holds nothing but white space.
func endOfInput(in []byte) string {
	if len(bytes.TrimLeft(in, " \t\r\n")) == 0 {
		return "empty: want a JSON value"
	}
	return "unexpected end of input"
}

func (p *jsonParser) ws() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (jval, error) {
	p.ws()
	if p.pos >= len(p.in) {
		return jval{}, p.errorf("%s", endOfInput(p.in))
	}
	switch c := p.in[p.pos]; {
	case c == '{' || c == '[':
		return p.container(c)
	case c == '"':
		start := len(p.out)
		if err := p.str(); err != nil {
			return jval{}, err
		}
		return jval{start: start, end: len(p.out), kind: '"'}, nil
	case c == '-' || c >= '0' && c <= '9':
		start := len(p.out)
		if err := p.number(); err != nil {
			return jval{}, err
		}
		return jval{start: start, end: len(p.out), kind: 's'}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.in)-p.pos >= len(lit) && string(p.in[p.pos:p.pos+len(lit)]) == lit {
				start := len(p.out)
				p.out = append(p.out, lit...)
				p.pos += len(lit)
				return jval{start: start, end: len(p.out), kind: 's'}, nil
			}
		}
		return jval{}, p.errorf("%s", unexpected(p.in, p.pos))
	}
}

func (p *jsonParser) container(open byte) (jval, error) {
	p.depth++
	if p.depth > MaxDepth {
		return jval{}, tooDeep(p.pos)
	}
	defer func() { p.depth-- }()
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	v := jval{start: len(p.out), kind: open}
	p.out = append(p.out, open)
	p.pos++
	p.ws()
	if p.pos < len(p.in) && p.in[p.pos] == closer {
		p.pos++
		p.out = append(p.out, closer)
		v.end = len(p.out)
		return v, nil
	}
	for {
		if open == '{' {
			p.ws()
			if p.pos >= len(p.in) || p.in[p.pos] != '"' {
				return v, p.errorf("expected a string key")
			}
			ks := len(p.out)
			if err := p.str(); err != nil {
				return v, err
			}
			v.kids = append(v.kids, jval{start: ks, end: len(p.out), kind: '"'})
			p.ws()
			if p.pos >= len(p.in) || p.in[p.pos] != ':' {
				return v, p.errorf("expected ':'")
			}
			p.pos++
			p.out = append(p.out, ':')
		}
		kid, err := p.value()
		if err != nil {
			return v, err
		}
		v.kids = append(v.kids, kid)
		p.ws()
		if p.pos >= len(p.in) {
			return v, p.errorf("unexpected end of input")
		}
		c := p.in[p.pos]
		p.pos++
		if c == closer {
			p.out = append(p.out, closer)
			v.end = len(p.out)
			return v, nil
		}
		if c != ',' {
			p.pos--
			return v, p.errorf("expected ',' or %q", closer)
		}
		p.out = append(p.out, ',')
	}
}

func (p *jsonParser) str() error {
	start := p.pos
	end, problem := scanString(p.in, p.pos)
	p.pos = end
	if problem != "" {
		return p.errorf("%s", problem)
	}
	p.out = append(p.out, p.in[start:end]...)
	return nil
}

func (p *jsonParser) number() error {
	start := p.pos
	end, problem := scanNumber(p.in, p.pos)
	p.pos = end
	if problem != "" {
		return p.errorf("%s", problem)
	}
	p.out = append(p.out, p.in[start:end]...)
	return nil
}

// BuildJSON stores doc structurally through sink and returns the root ref.
// The stored form reads back as Compact(doc).
func BuildJSON(doc []byte, sink Sink) (Ref, error) {
	p := &jsonParser{in: doc, out: make([]byte, 0, len(doc))}
	root, err := p.parseDoc()
	if err != nil {
		return Ref{}, err
	}
	b := &jsonBuilder{text: p.out, sink: sink}
	return b.build(root)
}

type jsonBuilder struct {
	text []byte
	sink Sink
}

func (b *jsonBuilder) build(v jval) (Ref, error) {
	text := b.text[v.start:v.end]
	switch {
	case v.kind == '"' && len(text) > ChunkString:
		return putChunks(b.sink, text)
	case v.kind == '"' || v.kind == 's' || len(text) <= SmallContainer:
		return leafRef(b.sink, text)
	case v.kind == '{':
		node := &NodeData{Type: TypeObject, Entries: make([]Entry, 0, len(v.kids)/2)}
		for i := 0; i+1 < len(v.kids); i += 2 {
			ref, err := b.build(v.kids[i+1])
			if err != nil {
				return Ref{}, err
			}
			node.Entries = append(node.Entries, Entry{Name: string(b.text[v.kids[i].start:v.kids[i].end]), Ref: ref})
		}
		return putNode(b.sink, node, int64(len(node.Entries)))
	default: // '['
		refs := make([]Ref, len(v.kids))
		sizes := make([]int64, len(v.kids))
		for i, kid := range v.kids {
			ref, err := b.build(kid)
			if err != nil {
				return Ref{}, err
			}
			refs[i], sizes[i] = ref, 1
		}
		return putList(b.sink, TypeArray, refs, sizes)
	}
}
