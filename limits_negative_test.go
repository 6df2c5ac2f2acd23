package cairn_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestSetLimitsRefusesNegative: a negative limit (-1 meant as
// "unlimited", or a sum gone wrong) is the caller's mistake: SetLimits
// reports it as ErrInvalid naming the field, and leaves the workspace's
// limits as they were, instead of silently taking the default. Zero
// still means the default.
func TestSetLimitsRefusesNegative(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	if err := ws.SetLimits(cairn.Limits{MaxValueBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	before := ws.Limits()
	for field, l := range map[string]cairn.Limits{
		"MaxObjectBytes": {MaxObjectBytes: -1},
		"MaxValueBytes":  {MaxValueBytes: -1},
		"MaxTotalBytes":  {MaxTotalBytes: -5, MaxDepth: 10},
		"MaxDepth":       {MaxDepth: -1},
	} {
		err := ws.SetLimits(l)
		if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "Limits."+field) || !strings.Contains(err.Error(), "negative") {
			t.Errorf("SetLimits with a negative %s: %v; want ErrInvalid naming Limits.%s as negative", field, err, field)
		}
		if got := ws.Limits(); got != before {
			t.Errorf("a refused SetLimits (%s) changed the limits to %+v", field, got)
		}
	}
	if err := ws.SetLimits(cairn.Limits{}); err != nil || ws.Limits() != cairn.DefaultLimits {
		t.Errorf("SetLimits of zero limits: %v, %+v; want the defaults", err, ws.Limits())
	}
}
