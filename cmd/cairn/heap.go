package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Collection tuning of a short-lived process. Most cairn commands run for
// tens of milliseconds over a small heap, and at Go's default (GOGC=100,
// a first goal of 4 MB) a commit spent about a tenth of its CPU in the
// collector, marking a heap that is freed at exit anyway. Until the live
// heap first exceeds smallHeap the collector runs only after the heap
// grows 4× past it (GOGC=400); from then on, for large states, it is
// back to the default, so peak memory stays what it was for them; serve
// and mcp, which run until stopped, go back to it at once (defaultGC).
// GOGC or GOMEMLIMIT in the environment turn this off.
const (
	smallHeapPercent = 400
	smallHeap        = 16 << 20
)

// shortGC says the short-process setting is on: tuneGC set it, and
// neither a large heap nor a server command has ended it yet.
var shortGC atomic.Bool

// tuneGC applies the short-process setting described above.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	shortGC.Store(true)
	debug.SetGCPercent(smallHeapPercent)
	watchHeap()
}

// defaultGC ends the short-process setting: once the live heap is large,
// and at once for a command that runs until stopped (serve, mcp), whose
// heap the setting was never meant for.
func defaultGC() {
	if shortGC.Swap(false) {
		debug.SetGCPercent(100)
	}
}

// heapProbe is an object whose cleanup runs once after a collection.
type heapProbe struct{ _ [16]byte }

// watchHeap checks, after the next collection, whether the live heap
// outgrew smallHeap; if so it restores the default, else it watches the
// collection after that. It stops once the setting has ended.
func watchHeap() {
	runtime.AddCleanup(new(heapProbe), func(struct{}) {
		if !shortGC.Load() {
			return
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > smallHeap {
			defaultGC()
			return
		}
		watchHeap()
	}, struct{}{})
}
