package soak_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/internal/soak"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// soakTime is $SOAK_TIME (a Go duration), else one minute.
func soakTime(t *testing.T) time.Duration {
	if s := os.Getenv("SOAK_TIME"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("$SOAK_TIME=%q: %v", s, err)
		}
		return d
	}
	return time.Minute
}

// soakSeed is $SOAK_SEED, else 0 (a random seed, which the run reports).
func soakSeed(t *testing.T) uint64 {
	if s := os.Getenv("SOAK_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("$SOAK_SEED=%q: %v", s, err)
		}
		return n
	}
	return 0
}

// cairnBinary is $CAIRN_BIN, else the cairn command built from this tree.
func cairnBinary(t *testing.T) string {
	if b := os.Getenv("CAIRN_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cairnlog/cairn/cmd/cairn").CombinedOutput(); err != nil {
		t.Fatalf("build cairn: %v\n%s", err, out)
	}
	return bin
}

func runSoak(t *testing.T, store string, env []string) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("the soak runs for a minute: skipped in -short mode")
	}
	cfg := soak.Config{Bin: cairnBinary(t), Store: store, Env: env, Duration: soakTime(t), Seed: soakSeed(t)}
	if testing.Verbose() {
		cfg.Log = os.Stderr
	}
	rep, err := soak.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep)
	for _, p := range rep.Problems {
		t.Errorf("problem: %s", p)
	}
	if rep.StepsAcked == 0 || rep.GCRuns == 0 || rep.StepsChecked == 0 {
		t.Errorf("the soak did nothing worth checking: %v", rep)
	}
	if rep.Kills+rep.Pauses == 0 {
		t.Errorf("the soak killed and paused nothing: %v", rep)
	}
}

// TestSoakLocal runs the soak harness on a local directory store.
func TestSoakLocal(t *testing.T) {
	runSoak(t, t.TempDir(), nil)
}

// TestSoakMinIO runs the soak harness on a real MinIO server.
func TestSoakMinIO(t *testing.T) {
	b := s3test.StartMinIO(t)
	runSoak(t, fmt.Sprintf("minio://%s/%s/soak?secure=false", b.Host, b.Name),
		[]string{"AWS_ACCESS_KEY_ID=" + b.AccessKey, "AWS_SECRET_ACCESS_KEY=" + b.SecretKey})
}
