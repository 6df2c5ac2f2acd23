package cairn_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRootLinksNoObjectStoreSDK: a program that embeds cairn over a
// local directory links no object-store SDK; backends register by URL
// scheme and only programs that import them (cmd/cairn) link them.
func TestRootLinksNoObjectStoreSDK(t *testing.T) {
	// go test puts its own go tool first on the PATH.
	out, err := exec.Command("go", "list", "-deps", "github.com/cairnlog/cairn").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, sdk := range []string{"github.com/aws/aws-sdk-go-v2", "github.com/minio/minio-go", "github.com/cairnlog/cairn/cas/s3", "github.com/cairnlog/cairn/cas/minio"} {
			if pkg == sdk || strings.HasPrefix(pkg, sdk+"/") {
				t.Errorf("package cairn depends on %s", pkg)
			}
		}
	}
}
