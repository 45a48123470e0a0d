package filestore

// FlushCount exposes to the tests how many flush system calls s made for its slot writes.
func FlushCount(s *Store) uint64 { return s.commit.flushCount() }
