package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/cairnlog/cairn/internal/httpapi"
)

const serveUsage = "[--listen ADDR] [--token-file F] [--max-body BYTES] [--max-conns N] [--stop-on-stdin-eof]"

var serveCmd = command{
	summary: "serve the workspace as an HTTP JSON API (see internal/httpapi/openapi.json)",
	usage:   serveUsage,
	run:     runServe,
	serves:  true,
}

// maxTokenBytes bounds what --token-file reads.
const maxTokenBytes = 4096

func runServe(ctx context.Context, e *env, args []string) error {
	defaultGC()
	fs := newFlags(e, "serve", serveUsage)
	listen := fs.String("listen", "127.0.0.1:7474", "listen on `ADDR`; anything but loopback needs a token")
	tokenFile := fs.String("token-file", "", "read the bearer token from `FILE` (default $CAIRN_TOKEN; none: loopback only)")
	maxBody := fs.wholeIn("max-body", httpapi.DefaultMaxBody, 1, math.MaxInt64, "a size in bytes", "", "refuse request bodies over `BYTES`")
	maxConns := fs.wholeIn("max-conns", httpapi.DefaultMaxConns, 1, math.MaxInt32, "a number of connections", "", "keep at most `N` connections open: past it the one idle longest is closed, and if every one is at work a new one gets 503")
	stopOnEOF := fs.Bool("stop-on-stdin-eof", false, "stop, as on SIGTERM, when standard input ends: a program that starts a private server with a pipe as its stdin stops it by exiting, however it exits")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	// White space at either end of a token cannot reach the server (a
	// header's value loses it), so it is no part of the token, whether
	// the token comes from the file or the environment.
	token, from := strings.TrimSpace(os.Getenv("CAIRN_TOKEN")), "$CAIRN_TOKEN"
	if *tokenFile != "" {
		b, err := readInput(ctx, e, "--token-file", *tokenFile, inputLimit{maxTokenBytes, "more than a token needs", false})
		if err != nil {
			return err
		}
		token, from = strings.TrimSpace(string(b)), "token file "+*tokenFile
		if token == "" {
			return usagef("token file %s is empty", *tokenFile)
		}
	}
	if i := strings.IndexFunc(token, func(r rune) bool { return r != '\t' && (r < 0x20 || r > 0x7e) }); i >= 0 {
		// No client can send it: every request would be refused 401.
		r, size := utf8.DecodeRuneInString(token[i:])
		if r == utf8.RuneError && size == 1 {
			// Not U+FFFD, which the file does not hold.
			return usagef("%s holds the byte 0x%02X, which is not UTF-8 text, so no client could send the token: want printable ASCII", from, token[i])
		}
		return usagef("%s holds U+%04X, a character an HTTP header cannot carry, so no client could send the token: want printable ASCII", from, r)
	}
	if _, port, err := net.SplitHostPort(*listen); err != nil {
		return usagef("--listen %q: want HOST:PORT, such as 127.0.0.1:7474", *listen)
	} else if _, err := net.LookupPort("tcp", port); err != nil {
		return usagef("--listen %q: invalid port %s", *listen, port)
	}
	if err := httpapi.CheckListen(*listen, token); err != nil {
		// Said in this command's flags (httpapi's own message is
		// for every caller of the package).
		return usagef("--listen %s is not a loopback address, so it needs a token: --token-file F or $CAIRN_TOKEN", *listen)
	}
	conns, err := connRoom(e, *maxConns, given(fs, "max-conns"), openFileLimit())
	if err != nil {
		return err
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	ln, err := httpapi.Listen(*listen, token)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	if *stopOnEOF {
		// The program that started this server holds the pipe's other
		// end: when it exits, even killed, the pipe ends, and so does
		// the server, which would otherwise serve on a token no one knows.
		go func() {
			_, _ = io.Copy(io.Discard, e.stdin)
			stop()
		}()
	}
	if stdoutClosed {
		// Started with stdout closed (cairn serve >&-), whose writes
		// the runtime sends to /dev/null: the address goes where the
		// user can still read it rather than nowhere.
		fmt.Fprintf(e.stderr, "cairn serve: http://%s (on stderr: standard output is closed)\n", ln.Addr())
	} else if _, err := fmt.Fprintf(e.stdout, "cairn serve: http://%s\n", ln.Addr()); err != nil {
		// Served unannounced, no client could learn a port chosen by
		// the system (--listen 127.0.0.1:0), nor be sure the server is
		// this one: refuse to start rather than serve unseen.
		ln.Close()
		if errors.Is(err, errReaderGone) {
			return err // its reader went away: stop quietly, as every command
		}
		return fmt.Errorf("cannot print the address it serves on (http://%s): %w", ln.Addr(), err)
	}
	return httpapi.New(ws, httpapi.Options{Token: token, MaxBody: int64(*maxBody), MaxConns: int(conns)}).Serve(ctx, ln)
}

// connRoom returns how many connections serve may keep open: want
// (--max-conns), if the files this process may open leave room for it
// beside the store's files and the server's own. Past that room the
// system refuses new connections before the server sees them, so
// neither closing an idle one nor a 503 can answer them: each waits,
// unanswered, until another closes. A --max-conns given over the room
// is refused; the default is lowered to fit, said on stderr.
func connRoom(e *env, want uint64, asked bool, limit uint64) (uint64, error) {
	if limit == 0 {
		return want, nil
	}
	// Kept for the store's files, the listener and standard streams.
	reserve := min(max(16, limit/8), 256)
	room := uint64(0)
	if limit > reserve {
		room = limit - reserve
	}
	if want <= room {
		return want, nil
	}
	if room == 0 {
		return 0, fmt.Errorf("this process may have only %d files open at once (ulimit -n), too few to serve: raise it (ulimit -n 4096)", limit)
	}
	if asked {
		return 0, usagef("--max-conns %d: this process may have only %d files open at once (ulimit -n), and the store and server need %d of them: give at most --max-conns %d, or raise the limit (ulimit -n)", want, limit, reserve, room)
	}
	fmt.Fprintf(e.stderr, "cairn serve: keeping at most %d connections open, not %d: this process may have only %d files open at once (ulimit -n); raise the limit to keep more\n", room, want, limit)
	return room, nil
}
