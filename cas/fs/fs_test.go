package fs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/fs"
)

func TestConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store {
		s, err := fs.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestMain lets the test binary act as a racing writer process.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CAIRN_FS_RACER_DIR"); dir != "" {
		s, err := fs.Open(dir)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		err = s.Put(context.Background(), os.Getenv("CAIRN_FS_RACER_KEY"), []byte(os.Getenv("CAIRN_FS_RACER_ID")), cas.PutOptions{IfAbsent: true})
		switch {
		case err == nil:
			fmt.Println("won")
		case errors.Is(err, cas.ErrExists):
			fmt.Println("lost")
		default:
			fmt.Println("error", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRaceIfAbsentProcesses races 16 processes on each conditional create:
// exactly one may win, and its bytes are what is stored.
func TestRaceIfAbsentProcesses(t *testing.T) {
	dir := t.TempDir()
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const procs, rounds = 16, 5
	for round := 0; round < rounds; round++ {
		key := fmt.Sprintf("race/%d", round)
		out := make([]string, procs)
		var wg sync.WaitGroup
		for p := 0; p < procs; p++ {
			wg.Add(1)
			go func(p int) {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "CAIRN_FS_RACER_DIR="+dir, "CAIRN_FS_RACER_KEY="+key, fmt.Sprintf("CAIRN_FS_RACER_ID=p%d", p))
				b, err := cmd.Output()
				if err != nil {
					t.Errorf("racer %d: %v", p, err)
				}
				out[p] = strings.TrimSpace(string(b))
			}(p)
		}
		wg.Wait()
		winner := -1
		for p, o := range out {
			switch o {
			case "won":
				if winner >= 0 {
					t.Fatalf("round %d: processes %d and %d both won", round, winner, p)
				}
				winner = p
			case "lost":
			default:
				t.Fatalf("round %d: process %d said %q", round, p, o)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no process won", round)
		}
		got, err := s.Get(context.Background(), key, 0, -1)
		if err != nil || string(got) != fmt.Sprintf("p%d", winner) {
			t.Fatalf("round %d: stored %q (%v), winner was p%d", round, got, err, winner)
		}
	}
}

func TestTempFilesIgnoredAndCleaned(t *testing.T) {
	dir := t.TempDir()
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A crashed put leaves a temp file behind.
	if err := os.WriteFile(dir+"/.tmp/put-crashed", []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.List(context.Background(), "", "", func(cas.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("List saw %d objects, want the temp file ignored", n)
	}
	removed, err := s.CleanTemp(0)
	if err != nil || removed != 1 {
		t.Fatalf("CleanTemp = %d, %v; want 1 removed", removed, err)
	}
}
