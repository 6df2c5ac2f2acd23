package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnexpandedTildeRefused: a path starting with a ~ the shell did
// not expand (--store=~/agents, CAIRN_STORE=~/agents from an env file,
// --dir=~/out) is bad input, exit 2, saying so and naming the path
// meant, and nothing is made. A commit made a store in a directory named
// ~ in the current directory (./~/agents), a checkout a ./~/out, where a
// later rm -rf ~ meant for them removes the home directory. ./~/… is
// taken as written, and so is a ~ directory that already exists.
func TestUnexpandedTildeRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CAIRN_CACHE_DIR", "off")
	cwd := t.TempDir()
	t.Chdir(cwd)
	good := filepath.Join(t.TempDir(), "store")
	if _, errs, code := cli(t, good, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	refused := func(what string, code int, out, errs, meant string) {
		t.Helper()
		if code != 2 || out != "" || !strings.Contains(errs, "~ is not expanded") || !strings.Contains(errs, meant) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 saying ~ is not expanded, naming %s", what, code, out, errs, meant)
		}
		if _, err := os.Lstat(filepath.Join(cwd, "~")); !os.IsNotExist(err) {
			t.Fatalf("%s made ./~ (stat: %v)", what, err)
		}
	}
	meant := filepath.Join(home, "agents")
	out, errs, code := cli(t, "~/agents", `{"a":1}`, "commit", "s", "-")
	refused("commit --store=~/agents", code, out, errs, meant)
	out, errs, code = cli(t, "file://~/agents", `{"a":1}`, "commit", "s", "-")
	refused("commit --store=file://~/agents", code, out, errs, meant)
	out, errs, code = cli(t, "~/agents", "", "log", "s")
	refused("log --store=~/agents", code, out, errs, meant)
	t.Setenv("CAIRN_STORE", "~/agents")
	out, errs, code = runDefault(`{"a":1}`, "commit", "s", "-")
	refused("commit with CAIRN_STORE=~/agents", code, out, errs, meant)
	t.Setenv("CAIRN_STORE", "")
	out, errs, code = cli(t, good, "", "checkout", "s", "--dir=~/out")
	refused("checkout --dir=~/out", code, out, errs, filepath.Join(home, "out"))
	out, errs, code = cli(t, good, "", "run", "s", "--dir=~/work", "--", "true")
	refused("run --dir=~/work", code, out, errs, filepath.Join(home, "work"))
	out, errs, code = cli(t, good, "", "export", "--format", "parquet", "--out=~/x.parquet")
	refused("export --out=~/x.parquet", code, out, errs, filepath.Join(home, "x.parquet"))

	// Written so on purpose: taken as written.
	if _, errs, code := cli(t, "./~/agents", `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit --store ./~/agents: exit %d: %s", code, errs)
	}
	if out, errs, code := cli(t, "~/agents", "", "log", "s"); code != 0 || !strings.Contains(out, "s@1") {
		t.Errorf("log --store ~/agents once ./~ exists: exit %d, %q, %s; want the store made there", code, out, errs)
	}
}

// TestURLWhereAPathBelongsRefused: a URL given where a command writes a
// local directory or file (checkout --dir s3://b/x, run --dir, export
// --out) is refused, exit 2, saying so. checkout and run made a
// directory named "s3:" (or "minio:") in the working directory and
// wrote the state there, exit 0. ./s3:/b/x, written so on purpose, is
// taken as written.
func TestURLWhereAPathBelongsRefused(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	cwd := t.TempDir()
	t.Chdir(cwd)
	store := filepath.Join(t.TempDir(), "store")
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{
		{"checkout", "s", "--dir", "s3://b/x"},
		{"run", "s", "--dir", "minio://h:9000/b/x", "--", "true"},
		{"export", "--format", "openai-jsonl", "--out", "file:///tmp/x.jsonl"},
	} {
		out, errs, code := cli(t, store, "", args...)
		if code != 2 || out != "" || !strings.Contains(errs, "a URL, not a path") {
			t.Errorf("%s: exit %d, %q %q; want exit 2 saying it is a URL, not a path", strings.Join(args, " "), code, out, errs)
		}
	}
	if des, _ := os.ReadDir(cwd); len(des) != 0 {
		t.Errorf("the working directory holds %v; want nothing made", des)
	}
	if _, errs, code := cli(t, store, "", "checkout", "s", "--dir", "./s3:/b/x"); code != 0 {
		t.Fatalf("checkout --dir ./s3:/b/x: exit %d: %s", code, errs)
	}
}
