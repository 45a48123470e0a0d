package filestore

// FlushCount exposes to the tests how many flush system calls s made for its slot writes.
func FlushCount(s *Store) uint64 { return s.commit.flushCount() }

// WholeReads exposes to the tests how many times s read both slots of a rooms shard.
func WholeReads(s *Store) uint64 { return s.slots.wholeReads.Load() }
