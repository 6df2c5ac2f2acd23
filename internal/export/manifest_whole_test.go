package export_test

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestManifestReadWhole: ReadManifestHeads stopped at the end of the
// heads list, so two manifests in one file (cat a.manifest.json
// b.manifest.json) re-exported the first one's heads and silently
// dropped the second's, exit 0; a manifest of another version, or a
// preference export's (whose heads are its pairs' branches, not its
// dataset), was read as a trajectory export of this version; a second
// heads list was never looked at. Each is now refused.
func TestManifestReadWhole(t *testing.T) {
	head := `{"session":"f","step":1,"id":"` + strings.Repeat("a", 64) + `","steps":1}`
	one := `{"version":1,"format":"openai-jsonl","heads":[` + head + `],"summary":{}}` + "\n"
	for _, c := range []struct{ name, manifest, want string }{
		{"two manifests", one + one, "text after its closing brace: give one manifest per file"},
		{"text after", one + "x", "text after its closing brace: give one manifest per file"},
		{"cut after heads", `{"version":1,"heads":[` + head + `]`, "unexpected EOF"},
		{"version 2", `{"version":2,"heads":[` + head + `]}`, "version 2: this cairn reads export manifests of version 1"},
		{"version after heads", `{"heads":[` + head + `],"version":"1"}`, `version "1": this cairn reads export manifests of version 1`},
		{"preference", `{"version":1,"format":"preference","heads":[` + head + `]}`, "a preference export's manifest: preference pairs are not re-exported"},
		{"heads twice", `{"version":1,"heads":[` + head + `],"heads":[]}`, "heads given twice"},
		{"metadata not a bool", `{"version":1,"metadata":"no","heads":[` + head + `]}`, "metadata: want true or false, got a string"},
		// A line of the export given instead of its manifest.
		{"an export line", `{"messages":[],"metadata":{"session":"f"}}` + "\n" + `{"messages":[]}`, "no heads"},
	} {
		err := export.ReadManifestHeads(strings.NewReader(c.manifest), func(export.ManifestHead) error { return nil })
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to end %q", c.name, err, c.want)
		}
	}
	// What export writes, and a hand-made manifest of heads alone, still read.
	for _, m := range []string{one, `{"heads":[` + head + `]}`, ` {"format":"atif","heads":[]} ` + "\n\n"} {
		if err := export.ReadManifestHeads(strings.NewReader(m), func(export.ManifestHead) error { return nil }); err != nil {
			t.Errorf("manifest %q: %v", m, err)
		}
	}
}
