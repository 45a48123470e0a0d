package filestore_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestSlotBytesAreEncodingJSONs: a slot built by hand holds the bytes that encoding/json and
// the header format give for the same envelope, so slots written before and after read alike.
func TestSlotBytesAreEncodingJSONs(t *testing.T) {
	type envelope struct { // roomsFile's fields, spelled out
		Schema    int             `json:"schema"`
		Version   uint64          `json:"version"`
		Previous  uint64          `json:"previous,omitempty"`
		Namespace string          `json:"namespace"`
		Shard     int             `json:"shard"`
		Data      json.RawMessage `json:"data"`
	}
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
		if err := enc.Encode(envelope{Schema: 1, Version: uint64(c.ver), Previous: uint64(c.prev), Namespace: c.key.Namespace,
			Shard: c.key.Index, Data: json.RawMessage(c.data)}); err != nil {
			t.Fatal(err)
		}
		body := payload.Bytes()
		want := fmt.Appendf(nil, "lfp-swarm-lease-rooms-slot 1 %d %d %08x\n", c.ver, len(body), crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
		want = append(want, body...)
		got, err := filestore.EncodeSlot(c.key, []byte(c.data), c.ver, c.prev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("slot of %+v:\n got %q\nwant %q", c, got, want)
		}
	}
	if _, err := filestore.EncodeSlot(rooms.ShardKey{Namespace: "n"}, []byte(`{"a":`), 1, 0); err == nil {
		t.Error("a document that is not JSON was encoded, want an error")
	}
}

// TestWriteOpensTheSlotOnce: a write on a shard this Store last wrote opens two slot files —
// the current slot to check its header, and the other one, whose header it checks and which it
// then writes through the same descriptor — not three.
func TestWriteOpensTheSlotOnce(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	key := rooms.ShardKey{Namespace: "opens", Index: 3}
	ver, err := s.CreateShard(ctx, key, []byte(`{"n":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if ver, err = s.UpdateShard(ctx, key, []byte(`{"n":1}`), ver); err != nil { // fills the cache
		t.Fatal(err)
	}
	before := filestore.SlotOpens(s)
	const writes = 20
	for n := 2; n < 2+writes; n++ {
		if ver, err = s.UpdateShard(ctx, key, fmt.Appendf(nil, `{"n":%d}`, n), ver); err != nil {
			t.Fatalf("write %d: %v", n, err)
		}
	}
	if opens := filestore.SlotOpens(s) - before; opens != 2*writes {
		t.Errorf("%d writes opened slot files %d times, want %d", writes, opens, 2*writes)
	}
	if data, v, err := openStore(t, s.Dir()).LoadShard(ctx, key); err != nil || string(data) != fmt.Sprintf(`{"n":%d}`, 1+writes) || v != ver {
		t.Fatalf("read back by another Store: %s at %d (%v)", data, v, err)
	}
}
