package cairn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestAppendWorkload is the core target: 1,000 steps, each handing over
// the whole state as one JSON document whose message list gained ~4.5 KB.
// A step's stored bytes (before compression: its new blobs and its whole
// manifest, layout included) must stay within maxAppendRatio of the
// appended bytes; the workload is seeded and the store in memory, so the
// ratio is exact and repeatable. Each append also rewrites the open node
// at each level of the message list's right spine and writes a manifest,
// whose layout names the session's packs since compaction; the layout's
// share is logged apart. Compaction's packs copy live blobs: they are
// the "written" figure, bounded by the design's 2x-bytes target, not
// part of the per-step ratio. Each step must cost one PUT (plus a head
// hint every manifest.HintEvery steps and a pack every fanout steps) and
// no GET or LIST, a fresh resume must find the head in O(1) requests and
// read at most 64 objects.
const maxAppendRatio = 1.2

func TestAppendWorkload(t *testing.T) {
	steps := 1000
	if testing.Short() {
		steps = 150
	}
	ctx := context.Background()
	backend := mem.New()
	ws := cairn.OpenStore(backend)
	s, _ := ws.Session("append")
	rng := rand.New(rand.NewPCG(1, 2))
	var msgs []string
	var appended, stored, layoutBytes int64
	var puts, gets, lists, written int64
	prevLen := 0
	for n := 1; n <= steps; n++ {
		words := make([]string, 0, 700)
		for len(strings.Join(words, " ")) < 4400 {
			words = append(words, fmt.Sprintf("w%x", rng.Uint32()))
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":"%s"}`, strings.Join(words, " ")))
		doc := `{"messages":[` + strings.Join(msgs, ",") + fmt.Sprintf(`],"step":%d}`, n)
		before := ws.Requests()
		st, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{Record: []byte(`{"messages_added":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		used := ws.Requests().Sub(before)
		if n > 1 {
			appended += int64(len(doc) - prevLen)
			stored += rawStepBytes(t, backend, st)
			layoutBytes += layoutSize(st)
			puts += used.Put
			gets += used.Get
			lists += used.List
			written += used.BytesWritten
		}
		prevLen = len(doc)
	}
	ratio := float64(stored) / float64(appended)
	putsPerStep := float64(puts) / float64(steps-1)
	perStep := float64(layoutBytes) / float64(steps-1)
	t.Logf("append workload, %d steps: appended %d B, stored %d B before compression: ratio %.3f (of it %.0f B of layout a step); per step %.3f PUT, %d GET, %d LIST in total; %d B written (compressed, packs included): %.3f of appended",
		steps, appended, stored, ratio, perStep, putsPerStep, gets, lists, written, float64(written)/float64(appended))
	if ratio > maxAppendRatio {
		t.Errorf("stored/appended = %.3f, over the design target %.2f", ratio, maxAppendRatio)
	}
	// The README quotes these figures, of the 1,000-step run: they must
	// be this run's (a -short run is shorter, and its figures differ).
	if readme, err := os.ReadFile("README.md"); err != nil {
		t.Error(err)
	} else if quote := fmt.Sprintf("stores %.3f× the appended bytes before\ncompression, at %.3f PUTs per step", ratio, putsPerStep); !testing.Short() && !strings.Contains(string(readme), quote) {
		t.Errorf("README.md does not quote this run's figures %q; update it (and the date of the run)", quote)
	}
	if gets != 0 || lists != 0 || putsPerStep > 1.1 {
		t.Errorf("per-step requests: %.3f PUT, %d GET, %d LIST; want 1 PUT (plus a hint every 32), no GET or LIST", putsPerStep, gets, lists)
	}
	// A fresh process resumes: head discovery is O(1) requests.
	ws2 := cairn.OpenStore(backend)
	s2, _ := ws2.Session("append")
	head, err := s2.Head(ctx)
	if err != nil || head.Number != uint64(steps) {
		t.Fatalf("head = %v, %v", head, err)
	}
	find := ws2.Requests()
	if _, err := head.JSON(ctx); err != nil {
		t.Fatal(err)
	}
	load := ws2.Requests().Sub(find)
	t.Logf("fresh resume: %d requests to find and read the head manifest, %d GETs to load the state", find.Get+find.List+find.Head, load.Get)
	if steps >= 1000 && load.Get > 64 {
		t.Errorf("a fresh resume of %d steps read %d objects, want at most 64", steps, load.Get)
	}
	if find.Get+find.List > 3 {
		t.Errorf("finding the head took %+v", find)
	}
}

// layoutSize returns the bytes the encoding of a step's layout takes.
func layoutSize(st *cairn.Step) int64 {
	m := cairn.StepManifest(st)
	full := int64(len(m.Encode()))
	m.Layout = manifest.Layout{}
	return full - int64(len(m.Encode()))
}

// rawStepBytes returns the bytes a step stored before compression: its
// manifest plus the raw size of every new blob.
func rawStepBytes(t *testing.T, store *mem.Store, st *cairn.Step) int64 {
	t.Helper()
	// Read back from the store, not from what the commit said.
	again, err := cairn.OpenStore(store).ReadStep(context.Background(), st.Session, st.Number)
	if err != nil {
		t.Fatal(err)
	}
	return again.NewBlobBytes + again.ManifestBytes
}
