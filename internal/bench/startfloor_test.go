package bench

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// fixedModules are the module paths cairn's users fixed.
var fixedModules = []string{
	"github.com/aws/aws-sdk-go-v2",
	"github.com/minio/minio-go/v7",
	"github.com/zeebo/blake3",
	"github.com/klauspost/compress",
}

// TestStartFloorLinksTheFixedPackages: the start-up floor the benchmark
// reports is honest only if startfloor imports exactly the packages of
// the fixed modules that cairn's own packages in the CLI import (what
// they pull in comes with them; what other modules, such as the Parquet
// writer, pull in of the fixed modules is theirs), and links nothing the
// CLI does not.
func TestStartFloorLinksTheFixedPackages(t *testing.T) {
	list := func(args ...string) []string {
		t.Helper()
		// go test puts its own go tool first on the PATH.
		out, err := exec.Command("go", append([]string{"list"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.Fields(string(out))
	}
	fixed := func(pkg string) bool {
		return slices.ContainsFunc(fixedModules, func(m string) bool { return pkg == m || strings.HasPrefix(pkg, m+"/") })
	}
	const cli, floor = "github.com/cairnlog/cairn/cmd/cairn", "github.com/cairnlog/cairn/internal/bench/startfloor"
	var own []string
	for _, p := range list("-deps", cli) {
		if strings.HasPrefix(p, "github.com/cairnlog/cairn") {
			own = append(own, p)
		}
	}
	var want []string
	for _, p := range list(append([]string{"-f", "{{join .Imports \"\\n\"}}"}, own...)...) {
		if fixed(p) && !slices.Contains(want, p) {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	got := slices.DeleteFunc(list("-f", "{{join .Imports \"\\n\"}}", floor), func(p string) bool { return !fixed(p) })
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("startfloor imports %v\ncairn's packages import, of the fixed modules, %v", got, want)
	}
	cliDeps := list("-deps", cli)
	for _, p := range list("-deps", floor) {
		if p != floor && !slices.Contains(cliDeps, p) {
			t.Errorf("startfloor links %s, which the CLI does not", p)
		}
	}
}
