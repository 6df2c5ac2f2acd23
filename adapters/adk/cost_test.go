package adk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/glebarez/sqlite"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// costEvents is the length of the measured session.
const costEvents = 1000

// costEvent is event i of a synthetic but realistic conversation: user and
// model turns of a few hundred bytes of text, token usage, and a state
// change every tenth event.
func costEvent(i int) *session.Event {
	role, author := "user", "user"
	if i%2 == 1 {
		role, author = "model", "assistant"
	}
	text := fmt.Sprintf("turn %d: ", i) + strings.Repeat(fmt.Sprintf("word%d ", i%97), 40+i%60)
	ev := &session.Event{
		ID:           fmt.Sprintf("ev-%06d", i),
		InvocationID: fmt.Sprintf("inv-%d", i/2),
		Author:       author,
		Timestamp:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second),
		Actions:      session.EventActions{StateDelta: map[string]any{}, ArtifactDelta: map[string]int64{}},
		LLMResponse: model.LLMResponse{
			Content:       genai.NewContentFromText(text, genai.Role(role)),
			TurnComplete:  true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(100 + i), CandidatesTokenCount: int32(len(text) / 4), TotalTokenCount: int32(100 + i + len(text)/4)},
		},
	}
	if i%10 == 0 {
		ev.Actions.StateDelta["turns"] = i
		ev.Actions.StateDelta["user:last_seen"] = ev.Timestamp.Format(time.RFC3339)
	}
	return ev
}

// appendAll creates a session on svc and appends costEvents events, calling
// after(i) after event i.
func appendAll(t *testing.T, svc session.Service, after func(i int)) {
	t.Helper()
	ctx := context.Background()
	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "cost", UserID: "u1", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	after(-1)
	for i := 0; i < costEvents; i++ {
		if err := svc.AppendEvent(ctx, created.Session, costEvent(i)); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		after(i)
	}
}

// TestStorageCost measures the bytes stored per appended event for a
// 1,000-event session, on cairn (local store) and on the services ADK ships:
// the database service on SQLite (file growth) and the in-memory service
// (heap growth). It fails only if cairn's cost per event grows with the
// session's length.
func TestStorageCost(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	var eventBytes int64
	for i := 0; i < costEvents; i++ {
		b, _ := json.Marshal(costEvent(i))
		eventBytes += int64(len(b))
	}
	avgEvent := float64(eventBytes) / costEvents
	t.Logf("events: %d, average event JSON %.0f B", costEvents, avgEvent)

	// ADK's in-memory service, first, while the heap is quiet: live heap
	// growth (the events are also referenced by the test's session object).
	var before, after runtime.MemStats
	inMem := session.InMemoryService()
	appendAll(t, inMem, func(i int) {
		if i == -1 {
			runtime.GC()
			runtime.ReadMemStats(&before)
		}
	})
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(inMem)
	t.Logf("ADK in-memory service: %d B heap growth for %d events = %.0f B/event, %.2fx the event JSON (nothing durable)",
		heap, costEvents, float64(heap)/costEvents, float64(heap)/float64(eventBytes))

	// cairn: every byte the session's steps put into the store (the
	// in-memory store, so that the disk's fsync latency does not slow the
	// run; the bytes are the same on any store), and the raw size of each
	// step object's blobs and manifest.
	store := mem.New()
	ws := cairn.OpenStore(store)
	defer ws.Close()
	svc := New(ws)
	var base, at900 int64
	start := time.Now()
	appendAll(t, svc, func(i int) {
		switch i {
		case -1:
			base = ws.Requests().BytesWritten
		case 899:
			at900 = ws.Requests().BytesWritten
		}
	})
	elapsed := time.Since(start)
	end := ws.Requests()
	total := end.BytesWritten - base
	last100 := end.BytesWritten - at900
	var raw, manifests int64
	name := svc.SessionName("cost", "u1", "s1")
	for n := uint64(2); n <= costEvents+1; n++ {
		st, err := cairn.OpenStore(store).ReadStep(context.Background(), name, n)
		if err != nil {
			t.Fatal(err)
		}
		raw += st.NewBlobBytes
		manifests += st.ManifestBytes
	}
	t.Logf("cairn: %d B stored for %d events = %.0f B/event (last 100: %.0f B/event), %.2fx the event JSON; before compression %.0f B/event of blobs + %.0f B/event of manifest; %d PUTs; %.1f ms/event CPU-bound",
		total, costEvents, float64(total)/costEvents, float64(last100)/100, float64(total)/float64(eventBytes),
		float64(raw)/costEvents, float64(manifests)/costEvents, end.Put, float64(elapsed.Microseconds())/1000/costEvents)
	if got := float64(last100) / 100; got > 3*avgEvent+2048 {
		t.Errorf("cairn stores %.0f B per event late in the session, against %.0f B of event JSON: the cost grows with the session", got, avgEvent)
	}

	// ADK's database service on SQLite.
	dbPath := filepath.Join(t.TempDir(), "sessions.db")
	dbSvc, err := database.NewSessionService(sqlite.Open(dbPath), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := database.AutoMigrate(dbSvc); err != nil {
		t.Fatal(err)
	}
	var dbBase int64
	start = time.Now()
	appendAll(t, dbSvc, func(i int) {
		if i == -1 {
			dbBase = fileSize(t, dbPath)
		}
	})
	elapsed = time.Since(start)
	dbTotal := fileSize(t, dbPath) - dbBase
	t.Logf("ADK database service (SQLite): %d B file growth for %d events = %.0f B/event, %.2fx the event JSON; %.1f ms/event",
		dbTotal, costEvents, float64(dbTotal)/costEvents, float64(dbTotal)/float64(eventBytes), float64(elapsed.Microseconds())/1000/costEvents)

}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal", path + "-journal"} {
		info, err := os.Stat(p)
		if err == nil {
			n += info.Size()
		}
	}
	return n
}
