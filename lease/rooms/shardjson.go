package rooms

import (
	"encoding/base64"
	"strconv"
)

// A shard is encoded on every write, and a room's entry on every activation's size check;
// encoding/json walks them by reflection through an Encoder each time. appendShard writes the
// same bytes by hand — encoding/json's canonical form (keys sorted, HTML escaping off) — when
// every string of the document is printable ASCII without a quote or a backslash, which
// encoding/json writes unchanged. Ids, candidates and hashes always are; metadata may not be,
// and a document with such metadata is left to encoding/json.

// appendShard appends d's canonical encoding to b; ok is false when a string needs escaping.
func appendShard(b []byte, d *shardDoc) (_ []byte, ok bool) {
	ok = true
	b = append(b, `{"schema":`...)
	b = strconv.AppendInt(b, int64(d.Schema), 10)
	b = append(b, `,"ns":`...)
	b, ok = appendPlainString(b, d.Namespace, ok)
	b = append(b, `,"shard":`...)
	b = strconv.AppendInt(b, int64(d.Index), 10)
	b = append(b, `,"shards":`...)
	b = strconv.AppendInt(b, int64(d.Shards), 10)
	b = append(b, `,"floor":`...)
	b = strconv.AppendUint(b, d.Floor, 10)
	b = append(b, `,"rooms":{`...)
	for i, r := range d.Rooms.slots { // in id order
		if i > 0 {
			b = append(b, ',')
		}
		b, ok = appendEntry(b, r.id, r.entry, ok)
	}
	return append(b, "}}"...), ok
}

// appendEntry appends one room of a shard's rooms object: "id":{…}.
func appendEntry(b []byte, id string, e roomEntry, ok bool) ([]byte, bool) {
	b, ok = appendPlainString(b, id, ok)
	b = append(b, `:{"c":`...)
	b, ok = appendPlainString(b, e.Candidate, ok)
	if e.Metadata != "" {
		b = append(b, `,"m":`...)
		b, ok = appendPlainString(b, e.Metadata, ok)
	}
	b = append(b, `,"t":`...)
	b = strconv.AppendUint(b, e.Term, 10)
	b = append(b, `,"e":`...)
	b = strconv.AppendInt(b, e.ExpiresMs, 10)
	b = append(b, `,"l":`...)
	b = strconv.AppendInt(b, e.TTLSec, 10)
	b = append(b, `,"h":"`...)
	b = base64.RawURLEncoding.AppendEncode(b, e.Hash[:])
	return append(b, `"}`...), ok
}

// appendPlainString appends s quoted if it needs no escaping; ok turns false (and stays)
// otherwise.
func appendPlainString(b []byte, s string, ok bool) ([]byte, bool) {
	for i := 0; i < len(s) && ok; i++ {
		ok = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), ok
}
