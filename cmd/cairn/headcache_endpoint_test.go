package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestHeadCacheEndpointFromEnvironment: an s3:// URL without ?endpoint=
// takes its server from AWS_ENDPOINT_URL, so one URL names a bucket on
// each of two servers. The caches used to key both stores by the URL:
// each server's commit saved its head where the other's next commit
// looked, and that commit found the head was not its store's and read
// the store (a LIST and the layout's GETs) instead of one PUT and one
// GET. Each server's store must keep its own cache entry.
func TestHeadCacheEndpointFromEnvironment(t *testing.T) {
	bin := cairnBinary(t)
	a, v := s3test.StartMinIO(t), s3test.StartVersityGW(t)
	c := v.Client(t)
	if err := c.MakeBucket(context.Background(), a.Name, minio.MakeBucketOptions{Region: v.Region}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	url := "CAIRN_STORE=s3://" + a.Name + "/ws"
	ma := &machine{t: t, bin: bin, env: append(processEnv(t, a, home), url, "AWS_ENDPOINT_URL="+a.Endpoint)}
	mv := &machine{t: t, bin: bin, env: append(processEnv(t, &s3test.Bucket{Server: v.Server, Name: a.Name}, home), url, "AWS_ENDPOINT_URL="+v.Endpoint)}
	ma.commit("s", docN(1))
	mv.commit("s", docN(1))
	for i := 2; i <= 3; i++ {
		for name, m := range map[string]*machine{"minio": ma, "versitygw": mv} {
			if r := m.commit("s", docN(i)); r.Step != uint64(i) || r.Requests.Put != 1 || r.Requests.Get != 1 || r.Requests.List != 0 {
				t.Errorf("commit %d on %s through its head cache: step %d, %+v; want 1 PUT, 1 GET, no LIST", i, name, r.Step, r.Requests)
			}
		}
	}
	ma.checkHead("s", 3, docN(3))
	mv.checkHead("s", 3, docN(3))
	all, _ := filepath.Glob(filepath.Join(home, "cache", "cairn", "heads", "*.head"))
	bases, _ := filepath.Glob(filepath.Join(home, "cache", "cairn", "heads", "*.base.head"))
	if len(all)-len(bases) != 2 {
		t.Errorf("head cache files: %v, want one (and its base) for each server's store", all)
	}
}
