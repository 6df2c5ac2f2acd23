package minio

// SetPageSize makes List ask for n keys per request, so tests can page
// through listings without writing thousands of objects.
func (s *Store) SetPageSize(n int) { s.pageSize = n }
