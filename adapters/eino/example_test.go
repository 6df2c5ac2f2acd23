package eino_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/adapters/eino"
	"github.com/cloudwego/eino/compose"
)

// An Eino graph that stops for a human's approval, keeps its checkpoint in
// cairn, and is resumed later (in real use: by another process, on any
// machine with the same store) with the answer.
func Example() {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://") // or a directory, or "s3://bucket/prefix" (importing cas/s3)
	if err != nil {
		log.Fatal(err)
	}
	store := eino.New(ws)

	g := compose.NewGraph[string, string]()
	_ = g.AddLambdaNode("approve", compose.InvokableLambda(func(ctx context.Context, plan string) (string, error) {
		if interrupted, _, _ := compose.GetInterruptState[any](ctx); !interrupted {
			return "", compose.Interrupt(ctx, "approve: "+plan)
		}
		_, _, answer := compose.GetResumeContext[string](ctx)
		return "plan " + answer, nil
	}))
	_ = g.AddEdge(compose.START, "approve")
	_ = g.AddEdge("approve", compose.END)
	graph, err := g.Compile(ctx, compose.WithCheckPointStore(store))
	if err != nil {
		log.Fatal(err)
	}

	_, err = graph.Invoke(ctx, "delete old logs", compose.WithCheckPointID("job-7"))
	info, _ := compose.ExtractInterruptInfo(err)
	fmt.Println("waiting:", info.InterruptContexts[0].Info)

	// Later: resume from the checkpoint cairn kept.
	resume := compose.ResumeWithData(ctx, info.InterruptContexts[0].ID, "approved")
	out, err := graph.Invoke(resume, "", compose.WithCheckPointID("job-7"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	steps, _ := store.Steps(ctx, "job-7")
	fmt.Println("checkpoints kept:", len(steps), "in session", store.SessionName("job-7"))
	// Output:
	// waiting: approve: delete old logs
	// plan approved
	// checkpoints kept: 1 in session eino-job-7
}
