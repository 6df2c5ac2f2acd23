package mem_test

import (
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
)

func TestConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store { return mem.New() })
}
