package cairn_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
)

// TestNilArguments calls every exported function and every exported
// method of the root package (its method sets found by reflection, the
// functions and types listed from the package's source, so that one
// added later is called too) with each argument that can be nil set to
// nil in turn, and every pointer method on a nil receiver. A nil
// context.Context crashed the program deep inside net/http or our own
// code; so did a nil callback, io.Writer, *Step or receiver. Now none
// panics: a nil context is ErrInvalid saying "nil context", and any
// other nil argument a call needs is ErrInvalid too.
func TestNilArguments(t *testing.T) {
	types, fns := exportedNames(t)
	t.Chdir(t.TempDir()) // a relative path given to a call lands here
	ctx := context.Background()
	store, w, s, st := oneStep(t)

	// valid holds a usable value of each type an exported call takes;
	// a call taking a type missing here fails the test, to be added.
	valid := map[reflect.Type]reflect.Value{}
	for _, v := range []any{
		"s", uint64(1), int(1), int64(1 << 20), []byte(`{"a":2}`),
		cairn.CommitOptions{}, cairn.GCOptions{}, cairn.DefaultLimits,
		cairn.Requests{}, cairn.StepRef{Session: "s", Number: 1},
		cairn.FileMode(0), cairn.Kind(0), cairn.Status(0), cairn.ChangeKind("add"),
		st, s, w, &cairn.Record{}, []string{"s"},
	} {
		valid[reflect.TypeOf(v)] = reflect.ValueOf(v)
	}
	valid[reflect.TypeFor[context.Context]()] = reflect.ValueOf(ctx)
	valid[reflect.TypeFor[cairn.State]()] = reflect.ValueOf(cairn.JSON([]byte(`{"a":2}`)))
	valid[reflect.TypeFor[io.Writer]()] = reflect.ValueOf(io.Discard)
	valid[reflect.TypeFor[cas.Store]()] = reflect.ValueOf(store)
	valid[reflect.TypeFor[func(*cairn.Step) error]()] = reflect.ValueOf(func(*cairn.Step) error { return nil })
	valid[reflect.TypeFor[func(string) error]()] = reflect.ValueOf(func(string) error { return nil })
	valid[reflect.TypeFor[error]()] = reflect.ValueOf(errors.New("x"))

	// receivers holds a value of each exported type with methods.
	receivers := map[string]any{
		"Workspace": w, "Session": s, "Step": st,
		"ConflictError": &cairn.ConflictError{}, "UnreadableError": &cairn.UnreadableError{}, "NotFoundError": &cairn.NotFoundError{},
		"Record": &cairn.Record{}, "Message": &cairn.Message{}, "ToolCall": &cairn.ToolCall{},
		"Requests": cairn.Requests{}, "StepRef": cairn.StepRef{}, "FileMode": cairn.FileMode(0),
		"Kind": cairn.Kind(0), "Status": cairn.Status(0),
	}
	funcs := map[string]any{
		"DamageHint": cairn.DamageHint, "DefaultCacheDir": cairn.DefaultCacheDir,
		"DefaultStore": cairn.DefaultStore, "ExpectHead": cairn.ExpectHead,
		"LimitEffect": cairn.LimitEffect, "LimitEnvHint": cairn.LimitEnvHint,
		"LimitHint": cairn.LimitHint, "MarshalRecord": cairn.MarshalRecord,
		"ProcessWriter": cairn.ProcessWriter, "StoreURL": cairn.StoreURL,
		"ValidIdempotencyKey": cairn.ValidIdempotencyKey, "ValidSession": cairn.ValidSession, "ParseRef": cairn.ParseRef,
		"Dir": cairn.Dir, "DirWithCache": cairn.DirWithCache, "JSON": cairn.JSON,
		"Patch": cairn.Patch, "StateOf": cairn.StateOf, "StateIDOf": cairn.StateIDOf,
		"LimitsFromEnv": cairn.LimitsFromEnv, "ParseRecord": cairn.ParseRecord,
		"ParseStatus": cairn.ParseStatus, "Open": cairn.Open, "OpenStore": cairn.OpenStore,
	}
	// A nil argument these calls take as meaning something, not as a
	// mistake: they may return without an error.
	nilMeans := map[string]bool{
		"Forget":        true, // forgets nothing
		"OpenStore":     true, // a workspace whose calls fail (TestOpenStoreNil)
		"Verify":        true, // ...string: every session
		"Usage":         true, // ...string: every session
		"JSON":          true, // the error comes at the commit
		"Patch":         true,
		"ParseRecord":   true, // the error is ErrNotConventional
		"Unwrap":        true,
		"Error":         true,
		"UnmarshalJSON": true, // json's own error for a nil target
	}

	for _, name := range types {
		if _, ok := receivers[name]; !ok {
			t.Errorf("exported type %s has methods and no receiver in this test: add one", name)
		}
	}
	for _, name := range fns {
		if _, ok := funcs[name]; !ok {
			t.Errorf("exported function %s is not called by this test: add it", name)
		}
	}

	// call calls fn with args, one of them (or the receiver) nil, and
	// checks what it did.
	call := func(t *testing.T, what string, fn reflect.Value, args []reflect.Value, nilCtx, mayPass bool) {
		t.Helper()
		var out []reflect.Value
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", what, r)
				}
			}()
			if fn.Type().IsVariadic() {
				out = fn.CallSlice(args)
			} else {
				out = fn.Call(args)
			}
		}()
		if out == nil {
			return
		}
		errType := reflect.TypeFor[error]()
		if n := fn.Type().NumOut(); n == 0 || fn.Type().Out(n-1) != errType {
			return
		}
		err, _ := out[len(out)-1].Interface().(error)
		switch {
		case nilCtx && (!errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "nil context")):
			t.Errorf("%s: %v; want ErrInvalid saying nil context", what, err)
		case !nilCtx && err == nil && !mayPass:
			t.Errorf("%s: no error", what)
		case !nilCtx && err != nil && !errors.Is(err, cairn.ErrInvalid) && !mayPass:
			t.Errorf("%s: %v; want ErrInvalid", what, err)
		}
	}
	argsOf := func(t *testing.T, what string, ft reflect.Type, skip int) []reflect.Value {
		t.Helper()
		var args []reflect.Value
		for i := skip; i < ft.NumIn(); i++ {
			v, ok := valid[ft.In(i)]
			if !ok {
				t.Fatalf("%s takes a %s, which this test has no value of: add one", what, ft.In(i))
			}
			args = append(args, v)
		}
		return args
	}
	nilable := func(k reflect.Kind) bool {
		return k == reflect.Interface || k == reflect.Func || k == reflect.Pointer || k == reflect.Slice
	}
	// each calls fn (whose arguments start at skip: 1 for a method
	// expression) once with each nilable argument nil.
	each := func(t *testing.T, name string, fn reflect.Value, skip int, recv []reflect.Value) {
		ft := fn.Type()
		args := argsOf(t, name, ft, skip)
		for i := range args {
			pt := ft.In(i + skip)
			if !nilable(pt.Kind()) {
				continue
			}
			nilArgs := slices.Clone(args)
			nilArgs[i] = reflect.Zero(pt)
			what := name + " with argument " + pt.String() + " nil"
			method := name[strings.LastIndex(name, ".")+1:]
			call(t, what, fn, append(slices.Clone(recv), nilArgs...), pt == reflect.TypeFor[context.Context](), nilMeans[method])
		}
	}
	for name, f := range funcs {
		each(t, name, reflect.ValueOf(f), 0, nil)
	}
	for name, r := range receivers {
		rt := reflect.TypeOf(r)
		for i := range rt.NumMethod() {
			m := rt.Method(i)
			full := name + "." + m.Name
			each(t, full, m.Func, 1, []reflect.Value{reflect.ValueOf(r)})
			if rt.Kind() == reflect.Pointer {
				// The method on a nil receiver, with valid arguments.
				args := argsOf(t, full, m.Func.Type(), 1)
				call(t, "(*"+name+")(nil)."+m.Name, m.Func, append([]reflect.Value{reflect.Zero(rt)}, args...), false, nilMeans[m.Name] || nilReceiverAnswers[m.Name])
			}
		}
	}
}

// nilReceiverAnswers are the methods a nil receiver answers without an
// error: Close of a nil *Workspace does nothing, as a zero Workspace's
// does.
var nilReceiverAnswers = map[string]bool{"Close": true}

// exportedNames lists the exported types with methods and the exported
// functions declared in the root package's non-test files (in the
// current directory).
func exportedNames(t *testing.T) (types, funcs []string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					funcs = append(funcs, d.Name.Name)
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if id, ok := recv.(*ast.Ident); ok && id.IsExported() && !slices.Contains(types, id.Name) {
					types = append(types, id.Name)
				}
			}
		}
	}
	return types, funcs
}
