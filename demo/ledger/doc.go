// Package ledger is the demo's protected resource: an append-only list of writes that accepts a
// write only if its fence is at least the highest fence it has accepted, so a leader that lost
// its term (paused, partitioned, slow to notice) cannot overwrite its successor's work — and at
// most the highest fence the election has issued (Election), so a writer that makes up a fence
// cannot raise the floor past every real leader's.
//
// Every write, accepted or rejected, is appended to one JSON-lines file and synced before it is
// acknowledged: a crash after the sync keeps the write (the highest fence with it), a crash
// before it loses only a write nobody was told about. On open the file is replayed; a torn tail
// (a crash in the middle of an append: a last line without its newline, or lines of NUL bytes
// the file's size covered before its data reached the disk) was never acknowledged and is cut
// off, but a damaged line before a complete record stops Open with an error naming the file and
// the line, and nothing is written over it.
//
// One Ledger at a time has a directory open: Open takes an exclusive lock on ledger.lock (the
// operating system's, released when the process ends, so a crash leaves none behind) and records
// the holder in it; a second Open, from any process, fails with ErrInUse naming that holder. The
// file is opened for appending, so a record lands at its end whatever else wrote there.
package ledger
