package cairn

import (
	"context"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
)

// StepObjectSizes reports, for the step object of session@n in store, the
// total raw (uncompressed) size of the blobs it carries and the size of
// its manifest. Benchmarks and storage reports use it to measure bytes
// stored before compression.
func StepObjectSizes(ctx context.Context, store cas.Store, session string, n uint64) (rawBlobs, manifestBytes int64, err error) {
	key := manifest.StepKey(session, n)
	data, err := store.Get(ctx, key, 0, -1)
	if err != nil {
		return 0, 0, err
	}
	obj, err := pack.Parse(data, key)
	if err != nil {
		return 0, 0, err
	}
	for _, e := range obj.Entries {
		rawBlobs += e.RawLen
	}
	return rawBlobs, int64(len(obj.Manifest)), nil
}
