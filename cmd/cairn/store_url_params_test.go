package main

import (
	"strings"
	"testing"
)

// TestStoreURLPortAndRepeatedParameter: a store URL whose port is out
// of range, or that gives a parameter twice, is a bad value (exit 2)
// naming what is wrong, before any request. A port of 99999 or 0 was
// tried as a server ("could not be reached (could not connect)", exit
// 1), and of secure=false&secure=true the last silently won.
func TestStoreURLPortAndRepeatedParameter(t *testing.T) {
	t.Setenv("MINIO_ROOT_USER", "user")
	t.Setenv("MINIO_ROOT_PASSWORD", "password")
	t.Setenv("AWS_ACCESS_KEY_ID", "user")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "password")
	for store, words := range map[string]string{
		"minio://127.0.0.1:99999/bkt/ws?secure=false":                         "port 99999: want a number from 1 to 65535",
		"minio://127.0.0.1:0/bkt/ws?secure=false":                             "port 0: want a number from 1 to 65535",
		"minio://127.0.0.1:9/bkt/ws?secure=false&secure=true":                 "secure given twice (it takes one value)",
		"s3://bkt/ws?endpoint=http://127.0.0.1:70000":                         "port 70000: want a number from 1 to 65535",
		"s3://bkt/ws?endpoint=http://127.0.0.1:9&endpoint=http://127.0.0.1:8": "endpoint given twice (it takes one value)",
	} {
		for _, args := range [][]string{{"commit", "s", "-"}, {"log", "s"}, {"sessions"}} {
			_, errs, code := cli(t, store, `{"a":1}`, args...)
			if code != 2 || !strings.Contains(errs, words) || strings.Count(errs, "\n") != 1 {
				t.Errorf("cairn --store %s %s: exit %d, %q; want exit 2 saying %q", store, args[0], code, errs, words)
			}
		}
	}
}
