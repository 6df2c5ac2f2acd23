package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn/internal/mcpserver"
	"github.com/cairnlog/cairn/internal/version"
)

const mcpUsage = ""

var mcpCmd = command{
	summary: "serve the workspace to an agent as MCP tools over stdio",
	usage:   mcpUsage,
	run:     runMCP,
	serves:  true,
}

func runMCP(ctx context.Context, e *env, args []string) error {
	defaultGC()
	fs := newFlags(e, "mcp", mcpUsage)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.IsDir() {
		return usagef("stdin is a directory, not an MCP client's stream")
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	err = mcpserver.New(ws, version.String()).Run(ctx, mcpserver.Transport(os.Stdin, os.Stdout))
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, context.Canceled) || errors.Is(err, mcpserver.ErrAbandoned) || brokenPipe(err) {
		return nil // the client hung up, or closed stdin and read no more answers
	}
	return err
}
