package storeurl

import "testing"

func TestSplit(t *testing.T) {
	for _, tc := range []struct{ url, scheme, rest string }{
		{"store", "file", "store"},
		{"/abs/store", "file", "/abs/store"},
		{"file://rel/store", "file", "rel/store"},
		{"file:///abs/store", "file", "/abs/store"},
		{"file://localhost/abs/store", "file", "/abs/store"},
		{"file://localhost", "file", "localhost"},
		{"file://localhostx/y", "file", "localhostx/y"},
		{"file://", "file", ""},
		{"s3://bucket/prefix", "s3", "bucket/prefix"},
		{"minio://localhost/b", "minio", "localhost/b"},
	} {
		scheme, rest := Split(tc.url)
		if scheme != tc.scheme || rest != tc.rest {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", tc.url, scheme, rest, tc.scheme, tc.rest)
		}
		dir, local := Local(tc.url)
		if local != (tc.scheme == "file") || (local && dir != tc.rest) {
			t.Errorf("Local(%q) = %q, %v", tc.url, dir, local)
		}
	}
}
