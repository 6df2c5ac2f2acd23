package cairn_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInvariantsCitedAreDefined: every invariant a Go comment cites
// (I1, I2, ...) is defined in docs/architecture.md, and all seven are.
func TestInvariantsCitedAreDefined(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^- \*\*(I[0-9]+)\*\* `).FindAllStringSubmatch(string(doc), -1) {
		defined[m[1]] = true
	}
	for i := 1; i <= 7; i++ {
		if id := "I" + string(rune('0'+i)); !defined[id] {
			t.Errorf("docs/architecture.md does not define %s", id)
		}
	}
	cite := regexp.MustCompile(`\bI[0-9]+\b`)
	cited := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for n, line := range strings.Split(string(b), "\n") {
			_, comment, ok := strings.Cut(line, "//")
			if !ok {
				continue
			}
			for _, id := range cite.FindAllString(comment, -1) {
				cited++
				if !defined[id] {
					t.Errorf("%s:%d cites %s, which docs/architecture.md does not define", path, n+1, id)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Error("no Go comment cites an invariant: the scan is broken")
	}
}
