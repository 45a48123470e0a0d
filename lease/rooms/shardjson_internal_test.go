package rooms

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// referenceEncode is encoding/json's canonical form of v, as encode wrote it before
// shardjson.go: HTML escaping off, no trailing newline.
func referenceEncode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestShardEncodingMatchesEncodingJSON: a shard document and a room's size are what
// encoding/json gives, whether written by hand (plain strings) or not (metadata that needs
// escaping), and the hand-written path is the one plain documents take.
func TestShardEncodingMatchesEncodingJSON(t *testing.T) {
	now := time.UnixMilli(1_764_000_000_123)
	key := ShardKey{Namespace: "lfp-elections", Index: 7}
	room := func(candidate, metadata string, term uint64) roomEntry {
		var h tokenHash
		copy(h[:], strings.Repeat(candidate, 32))
		return roomEntry{Candidate: candidate, Metadata: metadata, Term: term, ExpiresMs: now.UnixMilli(), TTLSec: 30, Hash: h}
	}
	empty := newShard(key, 64, now)
	full := newShard(key, 64, now)
	full.Floor = 1 << 60
	for i, m := range []string{"", "plain <&> ~", `quote "`, `back\`, "line\n", "tab\t", "del\x7f", "é", "\u2028", "\xff"} {
		full.Rooms.set("room-"+strings.Repeat("z", i)+"-b", room("c"+strings.Repeat("x", i), m, uint64(1000+i)))
	}
	plain := newShard(key, 64, now)
	plain.Rooms.set("room-b-0001", room("worker-b", "", 5))
	plain.Rooms.set("room-a-0001", room("worker-a", "meta data: 1 < 2 & {ok}", 7))
	for name, d := range map[string]*shardDoc{"empty": empty, "full": full, "plain": plain, "nil rooms": {Schema: 1}} {
		if got, want := d.encode(), referenceEncode(t, d); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
		for id, e := range d.Rooms.all() {
			var want bytes.Buffer
			want.Write(referenceEncode(t, id))
			want.WriteString(":")
			want.Write(referenceEncode(t, e))
			want.WriteString(",")
			if got := entrySize(id, e); got != want.Len() {
				t.Errorf("%s, room %s: entry size %d, want %d", name, id, got, want.Len())
			}
		}
	}
	for name, d := range map[string]*shardDoc{"empty": empty, "plain": plain} {
		if _, ok := appendShard(nil, d); !ok {
			t.Errorf("%s: not written by hand", name)
		}
	}
	if n := testing.AllocsPerRun(100, func() { plain.encode() }); n > 1 {
		t.Errorf("encoding a plain document: %.0f allocations, want at most 1 (the buffer)", n)
	}
	if _, ok := appendShard(nil, full); ok {
		t.Error("a document whose metadata needs escaping was written by hand")
	}
}
