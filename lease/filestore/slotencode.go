package filestore

import (
	"encoding/json"
	"errors"
	"hash/crc32"
	"strconv"
	"sync"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// A slot's bytes are built in one buffer, by hand: every request of the elections API on this
// store writes a slot, and encoding/json's reflection over the envelope, its compaction of the
// document (a copy, to validate bytes that json.Valid checks without one) and the copy of the
// envelope behind the header line cost about a tenth of the write's CPU. The envelope is
// written first, behind room for the header; the header, which needs the envelope's length and
// checksum, then goes right in front of it. For a compact document (the rooms engine writes
// only those) the bytes are encoding/json's for the same roomsFile (slotencode_test.go).

// slotHeaderRoom is the longest header line: the magic, " 1 ", a version (at most 20 digits), a
// length (at most 20 characters), the CRC-32C (8 hex digits) and the newline, with the spaces.
const slotHeaderRoom = len(slotMagic) + len(" 1 ") + 20 + 1 + 20 + 1 + 8 + 1

// slotBuffers keeps the buffers of slot writes for the next writes: a shard document is up to
// rooms' byte budget, and a fresh buffer per write is garbage for the collector.
var slotBuffers = sync.Pool{New: func() any { return new([]byte) }}

// errNotJSON: the rooms engine handed the store a document that is not JSON. The store never
// writes a slot it could not read back.
var errNotJSON = errors.New("file store: encode shard: the document is not valid JSON")

// encodeSlot appends to buf (which it may grow: grown is the buffer to keep) slot content
// holding version ver of shard key's document data, with prev the version of the other slot,
// and returns the slot's bytes, header line first, within grown. key.Namespace has passed
// lease.ValidateNamespace: its characters need no escaping in a JSON string.
func encodeSlot(buf []byte, key rooms.ShardKey, data []byte, ver, prev lease.Version) (grown, out []byte, err error) {
	if !json.Valid(data) {
		return buf, nil, errNotJSON
	}
	buf = append(buf, make([]byte, slotHeaderRoom)...)
	buf = appendEnvelope(buf, key, data, ver, prev)
	body := buf[slotHeaderRoom:]

	var header [slotHeaderRoom]byte
	h := appendSlotHeader(header[:0], slotMagic, uint64(ver), len(body), crc32.Checksum(body, castagnoli))
	start := slotHeaderRoom - len(h)
	copy(buf[start:], h)
	return buf, buf[start:], nil
}

// appendEnvelope appends the roomsFile envelope of data as encoding/json encodes it (fields in
// declaration order, previous omitted when 0, document verbatim, no HTML escaping), with the
// newline json.Encoder ends it with.
func appendEnvelope(buf []byte, key rooms.ShardKey, data []byte, ver, prev lease.Version) []byte {
	buf = append(buf, `{"schema":`...)
	buf = strconv.AppendInt(buf, roomsSchema, 10)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendUint(buf, uint64(ver), 10)
	if prev != 0 {
		buf = append(buf, `,"previous":`...)
		buf = strconv.AppendUint(buf, uint64(prev), 10)
	}
	buf = append(buf, `,"namespace":"`...)
	buf = append(buf, key.Namespace...)
	buf = append(buf, `","shard":`...)
	buf = strconv.AppendInt(buf, int64(key.Index), 10)
	buf = append(buf, `,"data":`...)
	buf = append(buf, data...)
	return append(buf, "}\n"...)
}

// appendSlotHeader appends the header line of a slot whose lines start with magic, announcing
// version ver and length bytes of content with CRC-32C sum.
func appendSlotHeader(h []byte, magic string, ver uint64, length int, sum uint32) []byte {
	h = append(h, magic...)
	h = append(h, " 1 "...)
	h = strconv.AppendUint(h, ver, 10)
	h = append(h, ' ')
	h = strconv.AppendInt(h, int64(length), 10)
	h = append(h, ' ')
	h = appendHex8(h, sum)
	return append(h, '\n')
}

// appendHex8 appends v as 8 lower-case hex digits, as "%08x" formats it.
func appendHex8(buf []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		buf = append(buf, digits[v>>uint(shift)&0xf])
	}
	return buf
}
