package filestore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestSlotBytesAreEncodingJSONs: a slot built by hand holds the bytes that encoding/json and
// the header format give for the same envelope, so slots written before and after read alike.
func TestSlotBytesAreEncodingJSONs(t *testing.T) {
	cases := []struct {
		key       rooms.ShardKey
		data      string
		ver, prev lease.Version
	}{
		{rooms.ShardKey{Namespace: "default", Index: 0}, `{}`, 1, 0},
		{rooms.ShardKey{Namespace: "A.b_c-9", Index: 63}, `{"rooms":{"r":{"m":"<a href='x'>&</a>"}},"floor":7}`, 1764620000000000000, 1764619999999999999},
		{rooms.ShardKey{Namespace: "n", Index: 5}, `{"m":"\u00e9\n"}`, math.MaxUint64, math.MaxUint64 - 1},
	}
	for _, c := range cases {
		var payload bytes.Buffer
		enc := json.NewEncoder(&payload)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(roomsFile{Schema: 1, Version: uint64(c.ver), Previous: uint64(c.prev), Namespace: c.key.Namespace,
			Shard: c.key.Index, Data: json.RawMessage(c.data)}); err != nil {
			t.Fatal(err)
		}
		body := payload.Bytes()
		want := fmt.Appendf(nil, "lfp-swarm-lease-rooms-slot 1 %d %d %08x\n", c.ver, len(body), crc32.Checksum(body, castagnoli))
		want = append(want, body...)
		_, got, err := encodeSlot(nil, c.key, []byte(c.data), c.ver, c.prev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("slot of %+v:\n got %q\nwant %q", c, got, want)
		}
	}
	if _, _, err := encodeSlot(nil, rooms.ShardKey{Namespace: "n"}, []byte(`{"a":`), 1, 0); err == nil {
		t.Error("a document that is not JSON was encoded, want an error")
	}
}
