// Command cairn-soak runs the soak harness (internal/soak) against the
// cairn binary: writers, forkers, prunes, removals and `gc --grace 0s`
// as separate processes, SIGKILLed and paused at random, for a set
// time; then it checks that every acknowledged step reads back and that
// verify is clean. It prints the seed and the counts, and exits 1 if it
// found any problem.
//
//	cairn-soak -bin .cache/bin/cairn -store local -time 10m [-seed N]
//	cairn-soak -bin .cache/bin/cairn -store minio -time 10m
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/internal/soak"
)

func main() {
	bin := flag.String("bin", ".cache/bin/cairn", "the cairn `binary` to run")
	store := flag.String("store", "local", "`local` (a fresh temporary directory), minio (a fresh MinIO server) or a store URL")
	d := flag.Duration("time", 0, "how long to run the chaos phase (default $SOAK_TIME or 60s)")
	seed := flag.Uint64("seed", 0, "seed of the schedule (0: random; printed)")
	writers := flag.Int("writers", 3, "writer loops")
	verbose := flag.Bool("v", false, "print each event and problem as it happens")
	flag.Parse()
	if err := run(*bin, *store, *d, *seed, *writers, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "cairn-soak:", err)
		os.Exit(1)
	}
}

func run(bin, store string, d time.Duration, seed uint64, writers int, verbose bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if d == 0 {
		d = time.Minute
		if s := os.Getenv("SOAK_TIME"); s != "" {
			var err error
			if d, err = time.ParseDuration(s); err != nil {
				return fmt.Errorf("$SOAK_TIME=%q: %w", s, err)
			}
		}
	}
	cfg := soak.Config{Bin: bin, Duration: d, Seed: seed, Writers: writers}
	if verbose {
		cfg.Log = os.Stderr
	}
	switch store {
	case "local":
		dir, err := os.MkdirTemp("", "cairn-soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.Store = dir
	case "minio":
		srv, err := s3test.LaunchMinIO()
		if err != nil {
			return err
		}
		defer srv.Stop()
		bucket, err := srv.NewBucket()
		if err != nil {
			return err
		}
		cfg.Store = fmt.Sprintf("minio://%s/%s/soak?secure=false", srv.Host, bucket)
		cfg.Env = []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey}
	default:
		cfg.Store = store
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano()%1_000_000_000) + 1
	}
	fmt.Printf("cairn-soak: seed %d, store %s, %v\n", cfg.Seed, store, d)
	rep, err := soak.Run(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Println(rep)
	for _, p := range rep.Problems {
		fmt.Println("PROBLEM:", p)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%d problems (seed %d)", len(rep.Problems), rep.Seed)
	}
	return nil
}
