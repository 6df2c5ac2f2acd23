package metered_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
)

func TestConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store { return metered.New(mem.New()) })
}

func TestCounts(t *testing.T) {
	ctx := context.Background()
	s := metered.New(mem.New())
	for i := 0; i < 2500; i++ {
		if err := s.Put(ctx, fmt.Sprintf("k/%05d", i), []byte("abc"), cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := s.Counts()
	s.Get(ctx, "k/00001", 0, -1)
	s.Stat(ctx, "k/00002")
	s.List(ctx, "k/", "", func(cas.Info) error { return nil })
	s.Delete(ctx, "k/00003")
	got := s.Counts().Sub(before)
	want := metered.Counts{Get: 1, Head: 1, List: 3, Delete: 1, BytesRead: 3}
	if got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	if c := s.Counts(); c.Put != 2500 || c.BytesWritten != 7500 {
		t.Fatalf("put counts = %+v", c)
	}
}
