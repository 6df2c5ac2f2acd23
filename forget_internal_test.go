package cairn

import (
	"fmt"
	"testing"

	"github.com/cairnlog/cairn/cas/mem"
)

// TestForget: a forgotten session leaves the workspace's cache, and a
// stale *Session cannot forget the one that replaced it.
func TestForget(t *testing.T) {
	w := OpenStore(mem.New())
	var held []*Session
	for i := range 100 {
		s, err := w.Session(fmt.Sprintf("s%d", i))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
	}
	for _, s := range held {
		w.Forget(s)
	}
	if n := len(w.sessions); n != 0 {
		t.Fatalf("%d sessions cached after forgetting all of them", n)
	}
	again, _ := w.Session("s0")
	if again == held[0] {
		t.Fatal("Session after Forget returned the forgotten *Session")
	}
	w.Forget(held[0]) // stale: must not drop again
	if now, _ := w.Session("s0"); now != again {
		t.Fatal("a stale *Session forgot its replacement")
	}
}
