package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExportHeadsPipeRefusedAtFirstBadByte: --heads from a pipe (a
// shell's <(...)) that is no export manifest is refused at its first
// bad byte or line, while its writer still writes, exit 2, said as a
// file's is. It was read into memory up to 256 MiB first: an endless
// binary stream cost 256 MiB and then "over 256 MiB from a pipe", and a
// wrong file with its writer open was never refused at all.
func TestExportHeadsPipeRefusedAtFirstBadByte(t *testing.T) {
	store := chatStore(t)
	for _, c := range []struct {
		name    string
		prefix  string
		endless []byte // written after prefix until the reader goes
		want    string
	}{
		{"binary", "", []byte{0x00, 0xff, 0x7f, 0x80}, "not an export manifest (not a JSON object)"},
		{"prose", "hello, this is not a manifest\n", []byte("more lines of it\n"), "not an export manifest (not a JSON object)"},
		{"bad head", `{"heads":[{"session":"../x","step":1,"id":"` + strings.Repeat("0", 64) + `","steps":1},` + "\n", []byte(`{"session":"s","step":1,"id":"` + strings.Repeat("0", 64) + `","steps":1},` + "\n"), "not an export manifest (head ../x@1: invalid session name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "heads")
			if err := mkfifo(t, fifo); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			stop := make(chan struct{})
			wrote := make(chan int64, 1)
			go func() {
				var n int64
				defer func() { wrote <- n }()
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				defer f.Close()
				k, err := io.WriteString(f, c.prefix)
				n += int64(k)
				chunk := bytes.Repeat(c.endless, 64<<10/len(c.endless))
				for err == nil {
					select {
					case <-stop:
						return
					default:
					}
					k, err = f.Write(chunk)
					n += int64(k)
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errb bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, []string{"--store", store, "export", "--format", "openai-jsonl", "--heads", fifo}, strings.NewReader(""), &out, &errb)
			}()
			var code int
			select {
			case code = <-done:
			case <-time.After(time.Minute):
				// Not a measure of speed: the pipe never ends.
				cancel()
				<-done
				close(stop)
				t.Fatalf("--heads from an endless pipe of %s: not refused a minute on (%d bytes read)", c.name, <-wrote)
			}
			close(stop)
			n := <-wrote
			want := "cairn export: --heads " + fifo + ": " + c.want
			if code != 2 || !strings.HasPrefix(errb.String(), want) {
				t.Errorf("--heads from a pipe of %s: exit %d, %q; want exit 2, %q…", c.name, code, errb.String(), want)
			}
			if n > 16<<20 {
				t.Errorf("--heads from a pipe of %s: %d MiB written before it was refused", c.name, n>>20)
			}
		})
	}
}
