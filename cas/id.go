package cas

import (
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/zeebo/blake3"
)

// IDSize is the size of an ID in bytes.
const IDSize = 32

// ID names content: the BLAKE3-256 hash of its uncompressed bytes.
type ID [IDSize]byte

// Sum returns the ID of data.
func Sum(data []byte) ID { return ID(blake3.Sum256(data)) }

// NewHash returns a hash whose 32-byte Sum is the ID (Sum) of the bytes
// written to it: Sum of data written a piece at a time.
func NewHash() hash.Hash { return blake3.New() }

// String returns the lower-case hex form of id.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 12 hex digits of id, for humans.
func (id ID) Short() string { return hex.EncodeToString(id[:6]) }

// IsZero reports whether id is the zero ID (no content).
func (id ID) IsZero() bool { return id == ID{} }

// ParseID parses the 64-digit hex form of an ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*IDSize {
		return id, fmt.Errorf("parse id %q: want %d hex digits", s, 2*IDSize)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("parse id %q: %w", s, err)
	}
	return id, nil
}

// Verify returns ErrCorrupt (naming what) unless data hashes to id.
func Verify(id ID, data []byte, what string) error {
	if got := Sum(data); got != id {
		g, w := got.Short(), id.Short()
		if g == w {
			// The damage is in the stored id past its short form.
			g, w = got.String(), id.String()
		}
		return fmt.Errorf("%w: %s: content hashes to %s, want %s", ErrCorrupt, what, g, w)
	}
	return nil
}
