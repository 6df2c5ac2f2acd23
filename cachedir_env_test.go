package cairn_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestDefaultCacheDirSetting: $CAIRN_CACHE_DIR=OFF turns the caches off
// as off does (it made a cache directory named OFF in the working
// directory), and a relative $CAIRN_CACHE_DIR is made absolute from the
// working directory, so the caches stay where the user meant.
func TestDefaultCacheDirSetting(t *testing.T) {
	for _, off := range []string{"off", "OFF", "Off"} {
		t.Setenv("CAIRN_CACHE_DIR", off)
		if d := cairn.DefaultCacheDir(); d != "" {
			t.Errorf("CAIRN_CACHE_DIR=%s: %q, want the caches off", off, d)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_CACHE_DIR", "rel/cache")
	if d, want := cairn.DefaultCacheDir(), filepath.Join(wd, "rel", "cache"); d != want {
		t.Errorf("CAIRN_CACHE_DIR=rel/cache: %q, want %q", d, want)
	}
}
