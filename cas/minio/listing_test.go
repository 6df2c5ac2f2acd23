package minio

import "testing"

// TestNotS3Listing: the answers of MinIO (a prefix URL-encoded, as
// encoding-type=url asks) and versitygw (a prefix as is, and none for an
// empty one) are listings; a web page, an empty body, a listing that
// does not repeat its prefix or repeats another are not.
func TestNotS3Listing(t *testing.T) {
	const ns = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`
	for _, c := range []struct {
		body, prefix string
		ok           bool
	}{
		{ns + `<Name>b</Name><Prefix>ws/ste%3Dps/</Prefix><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated><EncodingType>url</EncodingType></ListBucketResult>`, "ws/ste=ps/", true},
		{ns + `<Name>b</Name><Prefix>ws/ste=ps/</Prefix><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated><EncodingType></EncodingType></ListBucketResult>`, "ws/ste=ps/", true},
		{ns + `<Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`, "", true},
		{ns + `<Name>b</Name><Prefix>ws/steps/</Prefix><Contents><Key>ws/steps/a/00000000000000000001</Key><Size>3</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>`, "ws/steps/", true},
		{ns + `<Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`, "ws/steps/", false},
		{ns + `<Name>b</Name><Prefix>other/steps/</Prefix><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`, "ws/steps/", false},
		{`<html><body>Welcome</body></html>`, "ws/steps/", false},
		{`<html><body>Welcome</body></html>`, "", false},
		{`<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>Sign in</body></html>`, "ws/steps/", false},
		{"", "ws/steps/", false},
		{" \n", "", false},
	} {
		if got, _, _ := notS3Listing([]byte(c.body), c.prefix, ""); (got == "") != c.ok {
			t.Errorf("notS3Listing(%.60q…, %q) = %q; want a listing: %v", c.body, c.prefix, got, c.ok)
		}
	}
}
