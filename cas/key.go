package cas

import (
	"fmt"
	"strings"
)

// MaxKeyLen bounds the length of an object key.
const MaxKeyLen = 512

// ValidateKey reports whether key is a valid object key: 1..MaxKeyLen
// bytes, '/'-separated non-empty segments of [A-Za-z0-9._=-], none of
// them starting with '.' (so no "." or ".." and no hidden names). The rule
// keeps keys portable across file systems and object stores, makes path
// escapes impossible in the fs backend, and leaves dot-names free for a
// backend's own bookkeeping.
func ValidateKey(key string) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("%w: %q: length must be 1..%d", ErrInvalidKey, key, MaxKeyLen)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg[0] == '.' {
			return fmt.Errorf("%w: %q: empty segment or one starting with '.'", ErrInvalidKey, key)
		}
		for i := 0; i < len(seg); i++ {
			if !keyByte(seg[i]) {
				return fmt.Errorf("%w: %q: byte %q not allowed", ErrInvalidKey, key, seg[i])
			}
		}
	}
	return nil
}

// ValidatePrefix reports whether prefix may be used with List: empty, or a
// valid key optionally followed by '/', or a valid key's leading part.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	p := strings.TrimSuffix(prefix, "/")
	if p == "" {
		return fmt.Errorf("%w: prefix %q", ErrInvalidKey, prefix)
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' && !keyByte(p[i]) {
			return fmt.Errorf("%w: prefix %q: byte %q not allowed", ErrInvalidKey, prefix, p[i])
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '='
}
