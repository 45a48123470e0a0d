package rooms_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

func TestSuiteMemory(t *testing.T) {
	store := rooms.NewMemoryStore() // one instance: every handle must see the same shards
	roomstest.RunSuite(t, func(*testing.T) rooms.Store { return store })
}

// TestMemoryStoreServesDocumentsAndBytes: a Manager's documents and bytes written through the
// Store interface are one shard to both sides: the bytes of a document a Manager wrote are
// its canonical encoding (the token's hash, never the token), and bytes written over it are
// what the Manager reads and changes next.
func TestMemoryStoreServesDocumentsAndBytes(t *testing.T) {
	ctx := context.Background()
	store := rooms.NewMemoryStore()
	m, err := rooms.New(store, "docs", rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	room := rooms.NewRoomID()
	won, err := m.Campaign(ctx, room, "first", 30*time.Second, "meta")
	if err != nil {
		t.Fatal(err)
	}
	key := rooms.ShardKey{Namespace: "docs", Index: m.ShardOf(room)}
	data, ver, err := store.LoadShard(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"c":"first","m":"meta","t":`) || strings.Contains(string(data), won.Token) {
		t.Fatalf("stored bytes %s: want the room, without its token", data)
	}
	if shards, _ := store.ListShards(ctx, "docs"); len(shards) != 1 || string(shards[0].Data) != string(data) {
		t.Fatalf("listed %v, want the loaded bytes", shards)
	}

	// Bytes written over the document: the Manager reads them, and writes a document again.
	edited := strings.Replace(string(data), `"c":"first"`, `"c":"edited"`, 1)
	if _, err := store.UpdateShard(ctx, key, []byte(edited), ver); err != nil {
		t.Fatal(err)
	}
	if st, err := m.Status(ctx, room); err != nil || st.Leader == nil || st.Leader.CandidateID != "edited" {
		t.Fatalf("status after the bytes changed: %+v, %v", st, err)
	}
	if _, err := m.Renew(ctx, room, won.Token, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	data, _, err = store.LoadShard(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"c":"edited"`) || !strings.Contains(string(data), `"l":60`) {
		t.Fatalf("stored bytes after the renewal: %s", data)
	}
}
