package cas

// Slice returns the part of data that Get(off, n) must return: n bytes
// from off (n < 0: to the end), clipped to what exists. Backends that
// hold whole objects use it to serve ranged reads.
func Slice(data []byte, off, n int64) []byte {
	if off < 0 {
		off = 0
	}
	if off >= int64(len(data)) {
		return nil
	}
	end := int64(len(data))
	if n >= 0 && off+n < end {
		end = off + n
	}
	return data[off:end]
}
