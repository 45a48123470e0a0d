package filestore

// FlushCount exposes to the tests how many flush system calls s made for its slot writes.
func FlushCount(s *Store) uint64 { return s.commit.flushCount() }

// WholeReads exposes to the tests how many times s read both slots of a rooms shard.
func WholeReads(s *Store) uint64 { return s.slots.wholeReads.Load() }

// HeaderListings exposes to the tests how many shards s's ShardVersions answered from the
// slots' header lines rather than the version table.
func HeaderListings(s *Store) uint64 { return s.slots.headerListings.Load() }

// DirListings exposes to the tests how many times s listed its directory to learn which rooms
// shards exist.
func DirListings(s *Store) uint64 { return s.shardSet.listed.Load() }

// SlotOpens exposes to the tests how many times s opened a rooms slot file for a header check
// or a write.
func SlotOpens(s *Store) uint64 { return s.slots.opens.Load() }
