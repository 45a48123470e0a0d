package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"os"
	"path/filepath"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// An election's record is written at every renewal, and a handover writes it twice — the
// release, then the successor's acquisition — each of which must be durable before anyone acts
// on it. Format 1 wrote a temporary file, synced it, renamed it over the record and synced the
// directory: two device flushes and journal commits per write (1.2 ms at the median on this
// project's test machine, against 0.3 ms for rewriting an existing file in place and syncing
// its data). Format 2 keeps the rename's all-or-nothing property with two slots, as the rooms
// shards do (slots.go), in one file:
//
//   - The file is 2 × R bytes, R a power of two from 4 KiB to 1 MiB; slot i is the R bytes at
//     offset i × R, so that writing one slot never touches a page of the other.
//   - A slot is a header line, "lfp-swarm-lease-lease-slot 1 <version> <length> <crc32c>", then
//     <length> bytes of the record as JSON (schema 2), which names the version the other slot
//     held when it was written ("previous"). Bytes after them are left from longer records.
//   - A write overwrites the slot that does not hold the current version, then syncs the file's
//     data (fdatasync: the size never changes, so no metadata needs a journal commit). Readers
//     take the whole slot with the higher version; a write cut short leaves a slot whose header
//     does not match its content, and the other slot still holds the last acknowledged record
//     (after a release, the last held one: below).
//   - A release — a record that holds nothing — lets the lock go before its flush, and Update
//     returns after it: nobody acts on such a record but to write the next one, whose own
//     flush makes it durable too (fdatasync flushes every write to the file, whichever process
//     made it). So that the next write need not wait for that flush, it goes into the release's
//     own slot: the other slot, the last held record, is not touched until a write after the
//     release has been flushed. A successor's acquisition thus overlaps the release's flush, and
//     a handover waits for one flush instead of two. A power loss before either flush leaves
//     the release's slot holding the release, the acquisition, the record before the release,
//     or a torn slot; the last is the repair below, from the last held record, and in the
//     others nothing was acknowledged that is lost, but for the release: the term it ended is
//     then held until its deadline.
//   - A lock-free read that finds a slot not whole reads again, then under the lock: the slot
//     being written may be the current one, after a release.
//   - A new file, a record that outgrows its slots, and the first write over a format-1 file
//     write the whole file beside and rename it into place, both slots holding the new record.
//   - Under the election's lock, where no write is in progress, a slot that does not hold what
//     it must — torn, zeroed, or not the version the current slot names — is damage or a write
//     cut short by a power loss, and the two look alike. The newest record may then be lost, so
//     the store repairs before anything else is written (repairLocked).
//
// The name stays <namespace>.lease.json: a process of an older version, which reads format 1
// only, then finds the file and refuses it as corrupt, rather than missing it and starting an
// election of its own beside it.

const (
	// recordMagic starts every slot's header line.
	recordMagic = "lfp-swarm-lease-lease-slot"
	// recordSchema is the schema of a format-2 slot's JSON; format 1 files hold schema 1.
	recordSchema = 2
	// minRecordSlot and maxRecordSlot bound a slot's size R.
	minRecordSlot = 4 << 10
	maxRecordSlot = 1 << 20
)

// errTornRecord: no slot of a format-2 file is whole. Only damage leaves a file so: a write
// touches one slot, and a new file is renamed into place whole.
var errTornRecord = errors.New("no whole slot")

// recordRead is what reading an election's file found.
type recordRead struct {
	// file is the current record.
	file fileRecord
	// slotSize is R, or 0 for a format-1 file.
	slotSize int
	// at is the slot holding file (format 2).
	at int
	// damage says, for a format-2 file, why the other slot does not hold what it must; "" when
	// it does.
	damage string
	// otherVersion is the version the other slot holds when it is whole (format 2).
	otherVersion uint64
}

// readRecord reads and checks the election's file, of either format.
func (s *Store) readRecord(namespace string) (recordRead, error) {
	path := s.path(namespace)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return recordRead{}, fmt.Errorf("file store: %q: %w", namespace, lease.ErrNotFound)
	}
	if err != nil {
		return recordRead{}, storeError("read", path, err)
	}
	if !bytes.HasPrefix(data, []byte(recordMagic)) {
		fr, err := parseFormat1(path, namespace, data)
		return recordRead{file: fr}, err
	}
	return parseFormat2(path, namespace, data)
}

// parseFormat2 reads both slots of a format-2 file and picks the current one.
func parseFormat2(path, namespace string, data []byte) (recordRead, error) {
	size := len(data) / 2
	if len(data)%2 != 0 || size < minRecordSlot || size > maxRecordSlot || bits.OnesCount(uint(size)) != 1 {
		return recordRead{}, &lease.CorruptError{Where: fmt.Sprintf("file %q", path), Reason: fmt.Sprintf(
			"a two-slot lease file of %d bytes; it must be twice a power of two from %d to %d; repair it or remove it with the destroy command",
			len(data), minRecordSlot, maxRecordSlot)}
	}
	// The headers and checksums tell the whole slots and their versions; only the record that
	// is read is decoded (a read of the other slot's JSON would double the cost of every read).
	var heads [2]slotHeader
	var why [2]string
	for i := range heads {
		heads[i], why[i] = checkRecordSlot(data[i*size : (i+1)*size])
	}
	order := [2]int{0, 1}
	if heads[1].version > heads[0].version {
		order = [2]int{1, 0}
	}
	for _, at := range order {
		if why[at] != "" {
			continue
		}
		fr, torn, err := decodeRecordSlot(path, namespace, data[at*size:(at+1)*size], heads[at])
		if err != nil {
			return recordRead{}, err
		}
		if torn != "" {
			why[at] = torn
			continue
		}
		other := 1 - at
		r := recordRead{file: fr, slotSize: size, at: at, otherVersion: heads[other].version}
		switch v := heads[other].version; {
		case why[other] != "":
			r.damage = why[other]
		case v != fr.Version && v != fr.Previous:
			// Equal versions: both slots were written at once (a whole file). Otherwise the
			// other slot holds what it held when the current one was written.
			r.damage = fmt.Sprintf("it holds version %d, but version %d was written beside version %d", v, fr.Version, fr.Previous)
		}
		return r, nil
	}
	return recordRead{}, errTornRecord
}

// checkRecordSlot reads one slot's header and checks its content against it: why says why the
// slot is not whole ("" when it is).
func checkRecordSlot(slot []byte) (h slotHeader, why string) {
	line, rest, ok := bytes.Cut(slot, []byte{'\n'})
	if !ok {
		return slotHeader{}, "no header line"
	}
	h, why = parseHeaderOf(line, recordMagic)
	switch {
	case why != "":
		return slotHeader{}, why
	case h.length > len(rest):
		return slotHeader{}, fmt.Sprintf("the header announces %d bytes but the slot has room for %d", h.length, len(rest))
	case crc32.Checksum(rest[:h.length], castagnoli) != h.sum:
		return slotHeader{}, "the CRC-32C of the content does not match the header (bytes changed, or a write cut short)"
	}
	return h, ""
}

// decodeRecordSlot decodes the record of a slot that checkRecordSlot found whole, with header
// h. torn says why it is not whole after all; err is content that is whole but not a record of
// this election — written whole by something else.
func decodeRecordSlot(path, namespace string, slot []byte, h slotHeader) (fr fileRecord, torn string, err error) {
	_, rest, _ := bytes.Cut(slot, []byte{'\n'})
	corrupt := func(field, value, reason string) error {
		return &lease.CorruptError{Where: fmt.Sprintf("file %q", path), Field: field, Value: value, Reason: reason}
	}
	if err := json.Unmarshal(rest[:h.length], &fr); err != nil {
		return fileRecord{}, "", corrupt("", "", fmt.Sprintf("a slot whose checksum holds is not a lease record (%v); repair it or remove it with the destroy command", err))
	}
	if fr.Schema != recordSchema {
		return fileRecord{}, "", corrupt("schema", fmt.Sprint(fr.Schema), fmt.Sprintf("a two-slot file holds schema %d; upgrade lfp-swarm-lease or destroy the election", recordSchema))
	}
	if fr.Version != h.version {
		// The checksum covers the content, not the header: a changed header digit lands here.
		return fileRecord{}, fmt.Sprintf("the header says version %d, the content %d", h.version, fr.Version), nil
	}
	return fr, "", checkRecord(fr, namespace, corrupt)
}

// encodeRecordSlot returns the bytes of a slot holding fr, header line first.
func encodeRecordSlot(fr fileRecord) ([]byte, error) {
	fr.Schema = recordSchema
	body, err := json.Marshal(fr)
	if err != nil {
		return nil, fmt.Errorf("file store: encode: %w", err)
	}
	out := appendSlotHeader(make([]byte, 0, slotHeaderRoom+len(body)), recordMagic, fr.Version, len(body), crc32.Checksum(body, castagnoli))
	return append(out, body...), nil
}

// recordSlotSize is the smallest slot size that holds a slot of n bytes, or 0 when none does.
func recordSlotSize(n int) int {
	size := minRecordSlot
	for size < n {
		size *= 2
	}
	if size > maxRecordSlot {
		return 0
	}
	return size
}

// writeRecord writes fr, the next record of the election whose file r was read under its lock,
// and makes it durable: in place into the slot slotFor picks when the file is of format 2 and fr
// fits, else as a whole new file of format 2 (renamed into place).
func (s *Store) writeRecord(r recordRead, fr fileRecord) error {
	pending, err := s.writeRecordUnflushed(r, fr)
	if err != nil {
		return err
	}
	return pending.flush()
}

// writeRecordUnflushed is writeRecord up to the flush of a slot written in place, which it
// leaves to the caller (pending.flush; a nil pending needs none: a whole new file is durable
// once renamed into place).
func (s *Store) writeRecordUnflushed(r recordRead, fr fileRecord) (*unflushedSlot, error) {
	at := -1 // a whole new file
	if r.slotSize != 0 {
		at = slotFor(r, &fr)
	}
	slot, err := encodeRecordSlot(fr)
	if err != nil {
		return nil, err
	}
	path := s.path(fr.Namespace)
	if at < 0 || len(slot) > r.slotSize {
		size := recordSlotSize(len(slot))
		if size == 0 {
			return nil, fmt.Errorf("file store: %s: a record of %d bytes does not fit a slot of at most %d bytes; use shorter holder, node and task ids",
				path, len(slot), maxRecordSlot)
		}
		whole := make([]byte, 2*size)
		copy(whole, slot)
		copy(whole[size:], slot)
		return nil, s.replaceFile(path, whole)
	}
	return writeRecordSlot(path, int64(at)*int64(r.slotSize), slot)
}

// slotFor is the slot of r's file that fr, the next record, goes into: the one that does not
// hold the current record, unless that record holds nothing and the other slot is whole (see
// "A release"); fr's Previous is then the other slot's version.
func slotFor(r recordRead, fr *fileRecord) int {
	if r.file.HolderID == "" && r.damage == "" {
		fr.Previous = r.otherVersion
		return r.at
	}
	return 1 - r.at
}

// recordFlushHook, when a test sets it, runs before every flush of a slot written in place.
var recordFlushHook func(path string)

// unflushedSlot is a slot written in place whose data is not yet durable.
type unflushedSlot struct {
	f    rawFile
	path string
}

// writeRecordSlot writes slot at offset off of the file at path, leaving its flush to the
// caller.
func writeRecordSlot(path string, off int64, slot []byte) (*unflushedSlot, error) {
	f, err := openRaw(path, os.O_RDWR, 0)
	if err != nil {
		return nil, storeError("open", path, err)
	}
	if err := f.writeAt(slot, off); err != nil {
		f.close()
		return nil, storeError("write", path, err)
	}
	return &unflushedSlot{f: f, path: path}, nil
}

// flush syncs the slot's file's data (fdatasync: it flushes every write to the file, also those
// of other processes) and closes it. A nil slot has nothing to flush.
func (u *unflushedSlot) flush() error {
	if u == nil {
		return nil
	}
	defer u.f.close()
	if recordFlushHook != nil {
		recordFlushHook(u.path)
	}
	if err := syncData(u.f); err != nil {
		return storeError("sync", u.path, err)
	}
	return nil
}

// readLocked reads the election's file for a caller holding its lock. No write is in progress
// then, so a format-2 file without a whole slot is damaged, and a slot that does not hold what
// it must is repaired first (repairLocked).
func (s *Store) readLocked(namespace string) (recordRead, error) {
	r, err := s.readRecord(namespace)
	switch {
	case errors.Is(err, errTornRecord):
		return recordRead{}, &lease.CorruptError{Where: fmt.Sprintf("file %q", s.path(namespace)),
			Reason: "neither slot holds a whole record (header, length and CRC-32C must match); repair it or remove it with the destroy command"}
	case err == nil && r.damage != "":
		return s.repairLocked(r, time.Now())
	}
	return r, err
}

// repairLocked writes the record of a file whose other slot does not hold what it must, so
// that nothing issued before the loss is issued again (docs/safety.md §7). That slot may have
// held a newer record — a renewal, a release or a new term, acknowledged before the slot was
// damaged — which is lost. So the repaired record:
//
//   - raises the fence to at least the wall clock in microseconds (fences start there, and a
//     term adds one): the next term's fence is above any the lost record could have carried,
//     and a holder renewing with the old fence is told it no longer holds the lease;
//   - if held, runs for a full TTL from now, so that no one takes over before the deadline of a
//     holder whose lost renewal it was;
//   - takes a new version above the wall clock in nanoseconds (nextVersion), so that a reader
//     that saw the lost version never takes the repaired record for the same one.
//
// The damage is reported (OnDamage): it is not routine, even when a power loss caused it.
func (s *Store) repairLocked(r recordRead, now time.Time) (recordRead, error) {
	path := s.path(r.file.Namespace)
	fr := r.file
	fr.Previous = fr.Version
	fr.Version = uint64(nextVersion(lease.Version(fr.Version)))
	fr.Fence = max(fr.Fence, uint64(max(now.UnixMicro(), 0)))
	if fr.HolderID != "" {
		fr.RenewedAt = now.UTC()
		fr.ExpiresAt = maxTime(fr.ExpiresAt, now.UTC().Add(time.Duration(fr.TTLMillis)*time.Millisecond))
	}
	if err := s.writeRecord(r, fr); err != nil {
		return recordRead{}, err
	}
	repaired, err := s.readRecord(fr.Namespace)
	if err != nil {
		return recordRead{}, err
	}
	s.report(rooms.Damage{Where: fmt.Sprintf("%s (slot %d)", path, 1-r.at), Reason: fmt.Sprintf(
		"%s; the election continues from %s's slot %d at version %d, repaired as version %d with fence %d (a newer record may have been lost: a holder renewing an older fence steps down, and no one takes over before a full TTL)",
		r.damage, filepath.Base(path), r.at, r.file.Version, fr.Version, fr.Fence)})
	return repaired, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
