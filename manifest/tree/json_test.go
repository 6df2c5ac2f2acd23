package tree_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest/tree"
)

var update = flag.Bool("update", false, "rewrite testdata/tree-*.golden and the fuzz seed corpora")

var goldenDir = "testdata"

// build stores doc in a fresh store and returns both.
func build(t testing.TB, doc []byte) (*memStore, tree.Ref) {
	t.Helper()
	s := newMemStore()
	ref, err := tree.BuildJSON(doc, s)
	if err != nil {
		t.Fatalf("BuildJSON: %v", err)
	}
	return s, ref
}

func readJSON(t testing.TB, s *memStore, ref tree.Ref) []byte {
	t.Helper()
	got, err := (&tree.Reader{Src: s}).JSON(context.Background(), ref)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	return got
}

// bigArray returns a JSON array of n objects of about 100 bytes each.
func bigArray(n int) []string {
	elems := make([]string, n)
	for i := range elems {
		elems[i] = fmt.Sprintf(`{"i":%d,"role":"assistant","text":%q}`, i, seededText(60, uint64(i)))
	}
	return elems
}

func arrayDoc(elems []string) []byte {
	return []byte(`{"messages":[` + strings.Join(elems, ",") + `],"plan":"p"}`)
}

func TestJSONRoundTrip(t *testing.T) {
	long := make([]string, 500)
	for i := range long {
		long[i] = fmt.Sprint(i * i)
	}
	bigObj := make([]string, 100)
	for i := range bigObj {
		bigObj[i] = fmt.Sprintf(`"key %d": "value %s"`, i, seededText(10, uint64(i)))
	}
	docs := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `null`, `true`, `false`,
		` { } `, "\t[\n]\r\n",
		`{"a":{"b":{"c":[[[]],{}]}}}`,
		`[1, 2.50, -3e+10, 4E-2, 1e400, 123456789012345678901234567890, 0.000000000000000000001]`,
		`{"é":"ü","\u00e9":"\ud83d\ude00","emoji":"😀","ctl":"\b\f\n\r\t\/\\\""}`,
		`{ "spaced" :  [ 1 , 2 ,  { "x" : null } ] }`,
		`{"k":1,"k":2,"k":{"k":3}}`,
		`[` + strings.Join(long, ", ") + `]`,
		`{` + strings.Join(bigObj, ",\n  ") + `}`,
		`[{` + strings.Join(bigObj[:50], "},{") + `}]`,
		string(arrayDoc(bigArray(300))),
		`{"s":"` + seededText(70<<10, 1) + `"}`,
		`[` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100) + `]`,
		`{"deep":` + strings.Repeat(`{"pad":"`+seededText(1100, 3)+`","next":`, 40) + `null` + strings.Repeat(`}`, 40) + `}`,
	}
	for i, doc := range docs {
		want, err := tree.Compact([]byte(doc))
		if err != nil {
			t.Fatalf("%d: Compact: %v", i, err)
		}
		var std bytes.Buffer
		if err := json.Compact(&std, []byte(doc)); err != nil {
			t.Fatalf("%d: json.Compact: %v", i, err)
		}
		if !bytes.Equal(want, std.Bytes()) {
			t.Errorf("%d: tree.Compact differs from json.Compact", i)
		}
		s, ref := build(t, []byte(doc))
		if got := readJSON(t, s, ref); !bytes.Equal(got, want) {
			t.Errorf("%d: read back %.200q, want %.200q", i, got, want)
		}
		// Every id the build produced is reachable from the root, once.
		var reached []cas.ID
		err = (&tree.Reader{Src: s}).Reachable(context.Background(), ref, map[cas.ID]bool{}, func(id cas.ID, node bool) error {
			reached = append(reached, id)
			return nil
		})
		if err != nil {
			t.Fatalf("%d: Reachable: %v", i, err)
		}
		if got, want := len(reached), len(s.order); got != want {
			t.Errorf("%d: %d ids reachable, %d stored", i, got, want)
		}
	}
}

// TestJSONChunkedStringRoundTrip: a string long enough that its chunk
// list needs list nodes must read back. WriteJSON treats every TypeList
// node as an array and reports the chunk leaves under it as corrupt, so
// such a document is stored but cannot be read.
func TestJSONChunkedStringRoundTrip(t *testing.T) {
	ctx := context.Background()
	lists := 0
	for seed := uint64(1); seed <= 6; seed++ {
		doc := `{"s":"` + seededText(int(seed)*100<<10, seed) + `","n":1}`
		s, ref := build(t, []byte(doc))
		r := &tree.Reader{Src: s}
		obj, err := r.Node(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if str := obj.Entries[0].Ref; str.Kind == tree.Node {
			if n, err := r.Node(ctx, str); err == nil && n.Type == tree.TypeList {
				lists++
			}
		}
		got, err := r.JSON(ctx, ref)
		if err != nil || string(got) != doc {
			t.Errorf("%d-byte document with a long string: read back %d bytes, %v", len(doc), len(got), err)
		}
	}
	if lists == 0 {
		t.Error("no test string needed a list node; make them longer")
	}
}

// TestJSONExact: key order, number text and escapes are kept as written.
func TestJSONExact(t *testing.T) {
	pad := strings.Repeat("x", 1100) // forces object nodes rather than leaf blobs
	for _, doc := range []string{
		`{"z":1,"a":2,"m":1.50}`,
		`{"z":1,"a":2,"m":1.50,"pad":"` + pad + `"}`,
		`[1.50,1e400,1E+2,-0.0,"\u00e9","\u00E9","é","\/"]`,
		`{"\u00e9":1,"é":2,"pad":"` + pad + `","n":100000000000000000000000000001}`,
	} {
		s, ref := build(t, []byte(doc))
		if got := readJSON(t, s, ref); string(got) != doc {
			t.Errorf("read back %q\nwant %q", got, doc)
		}
	}
}

func TestJSONSyntax(t *testing.T) {
	for _, doc := range []string{
		``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `0x10`,
		`"\x"`, `"\u12"`, "\"\x01\"", `"unterminated`, `tru`, `nul`, `[1 2]`, `{"a":1 "b":2}`, `{} {}`, `NaN`, `Infinity`,
		"\xef\xbb\xbf{}", `'a'`,
	} {
		if json.Valid([]byte(doc)) {
			t.Fatalf("test case %q is valid JSON", doc)
		}
		if _, err := tree.BuildJSON([]byte(doc), newMemStore()); !errors.Is(err, tree.ErrSyntax) {
			t.Errorf("BuildJSON(%q) = %v, want ErrSyntax", doc, err)
		}
		if _, err := tree.Compact([]byte(doc)); !errors.Is(err, tree.ErrSyntax) {
			t.Errorf("Compact(%q) = %v, want ErrSyntax", doc, err)
		}
	}
	deep := strings.Repeat("[", tree.MaxDepth+1) + strings.Repeat("]", tree.MaxDepth+1)
	if _, err := tree.BuildJSON([]byte(deep), newMemStore()); err == nil {
		t.Errorf("BuildJSON of %d nested arrays succeeded", tree.MaxDepth+1)
	}
	ok := strings.Repeat("[", tree.MaxDepth) + strings.Repeat("]", tree.MaxDepth)
	if _, err := tree.BuildJSON([]byte(ok), newMemStore()); err != nil {
		t.Errorf("BuildJSON of %d nested arrays: %v", tree.MaxDepth, err)
	}
}

// added builds doc over the content of base and returns what it added.
func added(t *testing.T, base *memStore, doc []byte) (tree.Ref, map[cas.ID]int) {
	t.Helper()
	rec := &recordingSink{base: base, store: newMemStore(), added: map[cas.ID]int{}}
	for _, id := range base.order {
		b, _ := base.Blob(context.Background(), id)
		rec.store.Put(id, b)
	}
	ref, err := tree.BuildJSON(doc, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readJSON(t, rec.store, ref), doc; !bytes.Equal(got, want) {
		t.Fatal("read back differs")
	}
	return ref, rec.added
}

func total(m map[cas.ID]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestStructuralDedup: appending one element to a 1,000-element array
// stores the element, the last leaf and the path above it: a few small
// blobs, not the whole document.
func TestStructuralDedup(t *testing.T) {
	elems := bigArray(1000)
	base, _ := build(t, arrayDoc(elems))
	next := fmt.Sprintf(`{"i":1000,"role":"user","text":%q}`, seededText(300, 1000))
	_, add := added(t, base, arrayDoc(append(slices.Clone(elems), next)))
	t.Logf("append: %d new blobs/nodes, %d bytes, for a %d-byte element in a %d-byte document", len(add), total(add), len(next), len(arrayDoc(elems)))
	if len(add) > 8 {
		t.Errorf("append stored %d new blobs/nodes, want <= 8", len(add))
	}
	if got, limit := total(add), len(next)+2048; got > limit {
		t.Errorf("append stored %d bytes, want <= %d", got, limit)
	}
}

// TestListBoundariesStable: inserting or changing one element in the
// middle of a long array changes only the leaf holding it, at most one
// neighbour while the boundaries re-synchronise (nodes have a minimum
// length), and the path above; the other leaves keep their
// content-defined boundaries. 1,000 elements make four levels of nodes,
// so the bound is the element plus two nodes per level.
func TestListBoundariesStable(t *testing.T) {
	elems := bigArray(1000)
	base, _ := build(t, arrayDoc(elems))
	mid := fmt.Sprintf(`{"inserted":true,"text":%q}`, seededText(80, 5000))
	for name, doc := range map[string][]byte{
		"insert": arrayDoc(slices.Insert(slices.Clone(elems), 500, mid)),
		"change": arrayDoc(slices.Replace(slices.Clone(elems), 500, 501, mid)),
		"delete": arrayDoc(slices.Delete(slices.Clone(elems), 500, 501)),
		"prefix": arrayDoc(append([]string{mid}, elems...)),
	} {
		_, add := added(t, base, doc)
		t.Logf("%s: %d new blobs/nodes, %d bytes", name, len(add), total(add))
		if len(add) > 9 {
			t.Errorf("%s: %d new blobs/nodes, want <= 9", name, len(add))
		}
		if got, limit := total(add), len(mid)+4096; got > limit {
			t.Errorf("%s: %d new bytes, want <= %d", name, got, limit)
		}
	}
}

func diffJSON(t *testing.T, a, b []byte) []string {
	t.Helper()
	s := newMemStore()
	ra, err := tree.BuildJSON(a, s)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := tree.BuildJSON(b, s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = (&tree.Reader{Src: s}).DiffJSON(context.Background(), ra, rb, func(c tree.Change) error {
		got = append(got, string(c.Kind)+" "+c.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDiffJSON(t *testing.T) {
	big := func(edit func(obj map[string]string, keys *[]string, arr *[]string)) []byte {
		keys := []string{}
		obj := map[string]string{}
		for i := range 60 {
			k := fmt.Sprintf(`"k%d"`, i)
			keys = append(keys, k)
			obj[k] = fmt.Sprintf("%q", seededText(25, uint64(i)))
		}
		keys = append(keys, `"a/b~c"`)
		obj[`"a/b~c"`] = `"slash"`
		arr := bigArray(300)
		edit(obj, &keys, &arr)
		var b strings.Builder
		b.WriteString(`{"obj":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k + ":" + obj[k])
		}
		b.WriteString(`},"arr":[` + strings.Join(arr, ",") + `],"small":{"x":1}}`)
		return []byte(b.String())
	}
	a := big(func(map[string]string, *[]string, *[]string) {})
	if got := diffJSON(t, a, a); len(got) != 0 {
		t.Errorf("diff of identical documents: %v", got)
	}
	b := big(func(obj map[string]string, keys *[]string, arr *[]string) {
		obj[`"k5"`] = `"changed"`
		*keys = slices.DeleteFunc(*keys, func(k string) bool { return k == `"k7"` })
		*keys = append(*keys, `"new"`)
		obj[`"new"`] = `[1,2]`
		obj[`"a/b~c"`] = `"slash!"`
		(*arr)[10] = `{"changed":1}`
		*arr = append(*arr, `1`, `2`)
	})
	got := diffJSON(t, a, b)
	want := []string{
		"changed /obj/k5", "removed /obj/k7", "changed /obj/a~1b~0c", "added /obj/new",
		"removed /arr/10/i", "removed /arr/10/role", "removed /arr/10/text", "added /arr/10/changed",
		"added /arr/300", "added /arr/301",
	}
	if !slices.Equal(got, want) {
		t.Errorf("DiffJSON =\n%q\nwant\n%q", got, want)
	}
	// Small containers are stored as one blob, but a change inside one is
	// still reported at the member that changed.
	if got, want := diffJSON(t, []byte(`{"a":{"b":1},"c":[1]}`), []byte(`{"a":{"b":2},"c":[1,{}]}`)), []string{"changed /a/b", "added /c/1"}; !slices.Equal(got, want) {
		t.Errorf("small diff = %q, want %q", got, want)
	}
	// A change of type is reported where it happens; the whole document
	// is the pointer "" (RFC 6901).
	if got, want := diffJSON(t, []byte(`{"a":1}`), []byte(`[1]`)), []string{"changed "}; !slices.Equal(got, want) {
		t.Errorf("type-change diff = %q, want %q", got, want)
	}
	// Same text, different shape is not a change.
	if got := diffJSON(t, []byte(` [1, 2] `), []byte(`[1,2]`)); len(got) != 0 {
		t.Errorf("whitespace-only diff = %q", got)
	}
}

// TestDiffJSONRootPointer: RFC 6901 names the whole document "" and a
// member with the empty key "/". DiffJSON reports a changed root as "/",
// so it cannot be told apart from a change to the member "".
func TestDiffJSONRootPointer(t *testing.T) {
	pad := `"pad":"` + strings.Repeat("x", 1100) + `"`
	member := diffJSON(t, []byte(`{"":1,`+pad+`}`), []byte(`{"":2,`+pad+`}`))
	root := diffJSON(t, []byte(`1`), []byte(`2`))
	if len(member) != 1 || len(root) != 1 || member[0] == root[0] {
		t.Errorf("member %q and root %q changes have the same path", member, root)
	}
}

func TestLimits(t *testing.T) {
	ctx := context.Background()
	// 30 nested objects, each big enough to be a node.
	doc := []byte(strings.Repeat(`{"pad":"`+seededText(1100, 3)+`","next":`, 30) + `null` + strings.Repeat(`}`, 30))
	s, ref := build(t, doc)
	r := &tree.Reader{Src: s, Limits: tree.Limits{MaxDepth: 10}}
	if _, err := r.JSON(ctx, ref); !errors.Is(err, tree.ErrLimit) {
		t.Errorf("JSON with MaxDepth 10 of 30 nested nodes = %v, want ErrLimit", err)
	}
	r.Limits.MaxDepth = 40
	if _, err := r.JSON(ctx, ref); err != nil {
		t.Errorf("JSON with MaxDepth 40: %v", err)
	}
	r.Limits = tree.Limits{MaxBytes: int64(len(doc)) - 1}
	if _, err := r.JSON(ctx, ref); !errors.Is(err, tree.ErrLimit) {
		t.Errorf("JSON with MaxBytes one short = %v, want ErrLimit", err)
	}
	r.Limits.MaxBytes = int64(len(doc))
	if got, err := r.JSON(ctx, ref); err != nil || !bytes.Equal(got, doc) {
		t.Errorf("JSON with MaxBytes exactly the size: %v", err)
	}

	// Chunked bytes. (JSON of a long chunked string is covered by
	// TestJSONChunkedStringRoundTrip.)
	s2, ref2 := build(t, []byte(`"`+seededText(300<<10, 4)+`"`))
	r2 := &tree.Reader{Src: s2, Limits: tree.Limits{MaxBytes: 100 << 10}}
	if err := r2.WriteBytes(ctx, new(bytes.Buffer), ref2); !errors.Is(err, tree.ErrLimit) {
		t.Errorf("WriteBytes over MaxBytes = %v, want ErrLimit", err)
	}

	// A hostile list that contains itself cannot be built by hashing, but a
	// deep chain of list nodes can: it must stop at MaxDepth.
	s3 := newMemStore()
	leaf := s3.putNode(&tree.NodeData{Type: tree.TypeArray, Entries: []tree.Entry{{Ref: tree.Ref{Kind: tree.Inline, Data: []byte("1")}}}}, 1)
	for range 100 {
		leaf = s3.putNode(&tree.NodeData{Type: tree.TypeList, Entries: []tree.Entry{{Ref: leaf}}}, 1)
	}
	r3 := &tree.Reader{Src: s3, Limits: tree.Limits{MaxDepth: 50}}
	if _, err := r3.JSON(ctx, leaf); !errors.Is(err, tree.ErrLimit) {
		t.Errorf("100 nested list nodes with MaxDepth 50 = %v, want ErrLimit", err)
	}
	r3.Limits.MaxDepth = 0 // default
	if got, err := r3.JSON(ctx, leaf); err != nil || string(got) != "[1]" {
		t.Errorf("100 nested list nodes: %q, %v", got, err)
	}
}

// TestHostileJSONNodes: nodes that do not fit where they are found are
// corrupt, not panics.
func TestHostileJSONNodes(t *testing.T) {
	ctx := context.Background()
	s := newMemStore()
	dir := s.putNode(&tree.NodeData{Type: tree.TypeDir}, 0)
	chunks := s.putNode(&tree.NodeData{Type: tree.TypeChunks, Entries: []tree.Entry{{Ref: tree.Ref{Kind: tree.Inline, Data: []byte("x")}}}}, 1)
	array := s.putNode(&tree.NodeData{Type: tree.TypeArray, Entries: []tree.Entry{{Ref: tree.Ref{Kind: tree.Inline, Data: []byte("1")}}}}, 1)
	mixed := s.putNode(&tree.NodeData{Type: tree.TypeList, Entries: []tree.Entry{{Ref: array}, {Ref: chunks}}}, 2)
	mixed2 := s.putNode(&tree.NodeData{Type: tree.TypeList, Entries: []tree.Entry{{Ref: chunks}, {Ref: array}}}, 2)
	emptyList := s.putNode(&tree.NodeData{Type: tree.TypeList}, 0)
	missing := tree.Ref{Kind: tree.Node, ID: cas.Sum([]byte("missing"))}
	garbage := s.putBlob([]byte("garbage node"))
	r := &tree.Reader{Src: s}
	for name, ref := range map[string]tree.Ref{
		"dir in JSON":       dir,
		"array then chunks": mixed,
		"chunks then array": mixed2,
		"empty list":        emptyList,
		"missing node":      missing,
		"blob as node":      {Kind: tree.Node, ID: garbage.ID},
		"object with dir":   s.putNode(&tree.NodeData{Type: tree.TypeObject, Entries: []tree.Entry{{Name: `"a"`, Ref: dir}}}, 1),
		"array leaf in dir": s.putNode(&tree.NodeData{Type: tree.TypeList, Entries: []tree.Entry{{Ref: dir}}}, 1),
	} {
		_, err := r.JSON(ctx, ref)
		if err == nil {
			t.Errorf("%s: read succeeded", name)
		}
		if !errors.Is(err, cas.ErrCorrupt) && !errors.Is(err, cas.ErrNotFound) {
			t.Errorf("%s: %v, want ErrCorrupt or ErrNotFound", name, err)
		}
	}
}

// goldenDoc is the seeded document pinned by tree-json.golden: a long
// array, a big object, a string over ChunkString, exact number texts,
// escapes and duplicate keys, with white space to compact away.
func goldenDoc() []byte {
	var b strings.Builder
	b.WriteString("{\n  \"long\": [")
	for i := range 250 {
		if i > 0 {
			b.WriteString(", ")
		}
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "%d", i*i)
		case 1:
			fmt.Fprintf(&b, `{"i": %d, "t": %q}`, i, seededText(40, uint64(i)))
		default:
			fmt.Fprintf(&b, "%q", seededText(i%50, uint64(i)))
		}
	}
	b.WriteString("],\n  \"big\": {")
	for i := range 40 {
		fmt.Fprintf(&b, "\n    \"key%02d\": %q,", i, seededText(30, uint64(1000+i)))
	}
	b.WriteString("\n    \"key00\": \"duplicate\"},\n")
	fmt.Fprintf(&b, "  \"str\": %q,\n", seededText(70<<10, 77))
	b.WriteString(`  "nums": [1.50, 1e400, -0, 1E-7, 12345678901234567890123, 0.10],` + "\n")
	b.WriteString(`  "esc": "caf\u00e9 \"q\" \\ \/ \n \ud83d\ude00 é",` + "\n")
	b.WriteString(`  "dup": {"k": 1, "k": 2},` + "\n")
	b.WriteString(`  "empty": [{}, [], ""]` + "\n}\n")
	return []byte(b.String())
}

// goldenListing formats what a build stored, in put order: nodes in
// full, blobs by id and size (their ids pin their bytes).
func goldenListing(s *memStore, root tree.Ref) string {
	nodes := map[cas.ID]bool{}
	(&tree.Reader{Src: s}).Reachable(context.Background(), root, map[cas.ID]bool{}, func(id cas.ID, node bool) error {
		nodes[id] = node
		return nil
	})
	var out strings.Builder
	fmt.Fprintf(&out, "root %s\n", hex.EncodeToString(tree.AppendRef(nil, root)))
	for _, id := range s.order {
		if b := s.blobs[id]; nodes[id] {
			fmt.Fprintf(&out, "node %s %s\n", id, hex.EncodeToString(b))
		} else {
			fmt.Fprintf(&out, "blob %s %d\n", id, len(b))
		}
	}
	return out.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %.160s\nwant %.160s\na stored-format change must be deliberate: run go test -update", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s: %d lines, want %d; a stored-format change must be deliberate: run go test -update", path, len(gl), len(wl))
	}
}

// TestGoldenJSON pins the structural JSON encoding: node bytes, list
// boundaries, thresholds and chunking of a seeded document.
func TestGoldenJSON(t *testing.T) {
	s, root := build(t, goldenDoc())
	checkGolden(t, "tree-json.golden", goldenListing(s, root))
}

// appendDoc is an append-style agent state: n messages of about 4.5 KB.
func appendDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"role":"assistant","content":"step %d %s"}`, i, strings.Repeat(fmt.Sprintf("tok%d ", i), 500))
	}
	fmt.Fprintf(&b, `],"scratchpad":"thinking about step %d","plan":{"done":%d,"ratio":1.50}}`, n, n)
	return []byte(b.String())
}

func BenchmarkBuildJSON(b *testing.B) {
	doc := appendDoc(1000) // about 4.5 MB
	b.SetBytes(int64(len(doc)))
	b.ReportMetric(float64(len(doc))/1e6, "MB/doc")
	for b.Loop() {
		if _, err := tree.BuildJSON(doc, discard{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadJSON(b *testing.B) {
	doc := appendDoc(1000)
	s, ref := build(b, doc)
	r := &tree.Reader{Src: s}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if err := r.WriteJSON(context.Background(), discardWriter{}, ref); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Put(cas.ID, []byte) error { return nil }

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
