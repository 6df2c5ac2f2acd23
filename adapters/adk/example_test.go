package adk_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/adapters/adk"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// An ADK session kept in cairn: every appended event is a step, and a
// fresh service over the same store (another process, another machine)
// reads the session back.
func Example() {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://") // or a directory, or "s3://bucket/prefix" (importing cas/s3)
	if err != nil {
		log.Fatal(err)
	}
	svc := adk.New(ws) // pass as runner.Config{SessionService: svc}

	created, err := svc.Create(ctx, &session.CreateRequest{AppName: "helpdesk", UserID: "ana", SessionID: "ticket-12"})
	if err != nil {
		log.Fatal(err)
	}
	for i, text := range []string{"my disk is full", "try deleting old logs"} {
		ev := session.NewEventWithContext(ctx, "inv-1")
		ev.Author = []string{"user", "agent"}[i]
		ev.Content = genai.NewContentFromText(text, genai.Role(ev.Author))
		ev.Actions.StateDelta["turns"] = i + 1
		ev.Actions.StateDelta["user:plan"] = "free"
		if err := svc.AppendEvent(ctx, created.Session, ev); err != nil {
			log.Fatal(err)
		}
	}

	got, err := adk.New(ws).Get(ctx, &session.GetRequest{AppName: "helpdesk", UserID: "ana", SessionID: "ticket-12"})
	if err != nil {
		log.Fatal(err)
	}
	for ev := range got.Session.Events().All() {
		fmt.Printf("%s: %s\n", ev.Author, ev.Content.Parts[0].Text)
	}
	turns, _ := got.Session.State().Get("turns")
	plan, _ := got.Session.State().Get("user:plan")
	fmt.Println("turns:", turns, "plan:", plan)
	// Output:
	// user: my disk is full
	// agent: try deleting old logs
	// turns: 2 plan: free
}
