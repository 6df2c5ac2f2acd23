package version

import "testing"

func TestOverrideWins(t *testing.T) {
	if String() == "" {
		t.Fatal("empty version")
	}
	old := override
	t.Cleanup(func() { override = old })
	override = "v1.2.3"
	if got := String(); got != "v1.2.3" {
		t.Fatalf("String() = %q with the link-time override v1.2.3", got)
	}
}
