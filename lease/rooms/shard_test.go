package rooms

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

func testDoc(t *testing.T, key ShardKey, shards int, n int) *shardDoc {
	t.Helper()
	d := newShard(key, shards, time.UnixMicro(1_700_000_000_000_000))
	for d.Rooms.len() < n {
		id := NewRoomID()
		if shardIndex(id, shards) != key.Index {
			continue
		}
		_, h := newToken()
		d.Floor++
		d.Rooms.set(id, roomEntry{Candidate: "cand", Metadata: strings.Repeat("<é>", d.Rooms.len()), Term: d.Floor,
			ExpiresMs: 1_700_000_030_000, TTLSec: 30, Hash: h})
	}
	return d
}

func TestEncodeIsCanonicalAndRoundTrips(t *testing.T) {
	key := ShardKey{Namespace: "ns", Index: 3}
	d := testDoc(t, key, 8, 5)
	a, b := d.encode(), d.clone().encode()
	if string(a) != string(b) {
		t.Fatal("equal documents encode differently")
	}
	if strings.Contains(string(a), `\u003c`) {
		t.Fatal("HTML escaping costs bytes and is not wanted")
	}
	back, err := decodeShard(a, key, 8)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.encode()) != string(a) {
		t.Fatalf("round trip changed the document:\n%s\n%s", a, back.encode())
	}
}

// TestSizeTracksTheEncoding: a document's remembered size is its encoding's exact length
// through puts (new rooms, replaced rooms, the first room), removals (down to none) and
// clones, whether it was measured before the changes or after.
func TestSizeTracksTheEncoding(t *testing.T) {
	key := ShardKey{Namespace: "ns", Index: 0}
	check := func(d *shardDoc, when string) {
		t.Helper()
		if got, want := d.encodedSize(), len(d.encode()); got != want {
			t.Fatalf("%s: size %d, the encoding has %d bytes", when, got, want)
		}
	}
	extra := testDoc(t, key, 1, 4) // metadata that needs escaping, in all but the first
	for _, measured := range []bool{true, false} {
		d := newShard(key, 1, time.UnixMicro(1_700_000_000_000_000))
		if measured {
			check(d, "empty")
		}
		var ids []string
		for id, e := range extra.Rooms.all() {
			if want := len(withRoom(d, id, e).encode()); d.sized && d.sizeWith(id, &e, nil) != want {
				t.Fatalf("size with room %d: %d, want %d", len(ids), d.sizeWith(id, &e, nil), want)
			}
			putRoom(d, id, e)
			ids = append(ids, id)
		}
		check(d, "after four puts")
		for i, id := range ids { // renewals: only numbers change, whatever the metadata
			e, _ := d.Rooms.get(id)
			e.ExpiresMs = []int64{5, -12, 1_700_000_123_456, 99}[i]
			e.TTLSec, e.Term = []int64{5, 30, 300, 12}[i], []uint64{1, 12345, 9, 1 << 60}[i]
			putRoom(d, id, e)
			check(d, fmt.Sprintf("after renewal %d", i+1))
		}
		d = d.clone()
		e, _ := d.Rooms.get(ids[1])
		e.TTLSec, e.Metadata = 300, ""
		putRoom(d, ids[1], e)
		check(d, "after a replacement")
		for i, id := range ids {
			d.remove(id)
			check(d, fmt.Sprintf("after %d removals", i+1))
		}
		d.remove(ids[0]) // gone already
		check(d, "after removing a missing room")
	}
}

// putRoom sets room id of d to e, looking up its entry as the engine does.
func putRoom(d *shardDoc, id string, e roomEntry) {
	if old, ok := d.Rooms.get(id); ok {
		d.put(id, e, &old)
		return
	}
	d.put(id, e, nil)
}

// withRoom is a copy of d with room id set to e.
func withRoom(d *shardDoc, id string, e roomEntry) *shardDoc {
	c := d.clone()
	c.Rooms.set(id, e)
	return c
}

func TestDecodeRefusesWhatItCannotTrust(t *testing.T) {
	key := ShardKey{Namespace: "ns", Index: 1}
	good := testDoc(t, key, 4, 2)
	var someID string
	for id := range good.Rooms.all() {
		someID = id
	}
	for name, mutate := range map[string]func(d *shardDoc){
		"schema":     func(d *shardDoc) { d.Schema = 2 },
		"namespace":  func(d *shardDoc) { d.Namespace = "other" },
		"index":      func(d *shardDoc) { d.Index = 2 },
		"shards":     func(d *shardDoc) { d.Shards = 8 },
		"term>floor": func(d *shardDoc) { e, _ := d.Rooms.get(someID); e.Term = d.Floor + 1; d.Rooms.set(someID, e) },
		"term 0":     func(d *shardDoc) { e, _ := d.Rooms.get(someID); e.Term = 0; d.Rooms.set(someID, e) },
		"ttl":        func(d *shardDoc) { e, _ := d.Rooms.get(someID); e.TTLSec = 1; d.Rooms.set(someID, e) },
		"candidate":  func(d *shardDoc) { e, _ := d.Rooms.get(someID); e.Candidate = "a/b"; d.Rooms.set(someID, e) },
		"wrong shard": func(d *shardDoc) {
			for {
				if id := NewRoomID(); shardIndex(id, 4) != key.Index {
					e, _ := d.Rooms.get(someID)
					d.Rooms.set(id, e)
					return
				}
			}
		},
	} {
		d := good.clone()
		mutate(d)
		var ce *lease.CorruptError
		if _, err := decodeShard(d.encode(), key, 4); !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *lease.CorruptError", name, err)
		}
	}
	for _, bad := range []string{`{`, `[]`, `{"schema":1,"ns":"ns","shard":1,"shards":4,"floor":1,"rooms":{"` + someID + `":{"c":"a","t":1,"e":1,"l":30,"h":"xx"}}}`} {
		var ce *lease.CorruptError
		if _, err := decodeShard([]byte(bad), key, 4); !errors.As(err, &ce) {
			t.Errorf("%.40s: %v, want a *lease.CorruptError", bad, err)
		}
	}
}

func TestShardCountMismatchIsRefused(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	m8, err := New(store, "ns", WithShards(8))
	if err != nil {
		t.Fatal(err)
	}
	m4, err := New(store, "ns", WithShards(4))
	if err != nil {
		t.Fatal(err)
	}
	// A room of a shard both counts have (below 4), so that the 4-shard manager reaches it.
	room := NewRoomID()
	for m8.ShardOf(room) >= 4 {
		room = NewRoomID()
	}
	if _, err := m8.Campaign(ctx, room, "a", 10*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	var other string
	for other = NewRoomID(); m4.ShardOf(other) != m8.ShardOf(room); other = NewRoomID() {
	}
	var ce *lease.CorruptError
	if _, err := m4.Status(ctx, other); !errors.As(err, &ce) || !strings.Contains(err.Error(), "shard count") {
		t.Fatalf("status through a manager with another shard count: %v", err)
	}
	if _, err := m4.Campaign(ctx, other, "a", 10*time.Second, ""); !errors.As(err, &ce) {
		t.Fatalf("campaign through a manager with another shard count: %v", err)
	}
}

func TestTokens(t *testing.T) {
	tok, h := newToken()
	if len(tok) != 43 || strings.ContainsAny(tok, "+/=") {
		t.Fatalf("token %q", tok)
	}
	back, err := hashToken(tok)
	if err != nil || !back.equal(h) {
		t.Fatalf("hashToken(%q) = %x, %v", tok, back, err)
	}
	if _, other := newToken(); other.equal(h) {
		t.Fatal("two tokens share a hash")
	}
	if id := NewRoomID(); len(id) != 32 || ValidateRoomID(id) != nil {
		t.Fatalf("room id %q", id)
	}
	// A generated id never reads as a flag on a command line. 1 in 64 random ids would.
	for range 10_000 {
		if id := NewRoomID(); id[0] == '-' {
			t.Fatalf("room id %q starts with '-'", id)
		}
	}
}

func TestValidation(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
	}{
		{ValidateRoomID("abcdefgh"), nil},
		{ValidateRoomID("abcdefg"), ErrInvalidRoomID},
		{ValidateRoomID(strings.Repeat("a", 64)), nil},
		{ValidateRoomID("abcdefgh."), ErrInvalidRoomID},
		{ValidateCandidateID(strings.Repeat("a", 64)), nil},
		{ValidateCandidateID("a b"), ErrInvalidCandidate},
		{ValidateCandidateID("é"), ErrInvalidCandidate},
		{ValidateMetadata(strings.Repeat("😀", 1024)), nil},
		{ValidateMetadata(strings.Repeat("😀", 1025)), ErrInvalidMetadata},
		{ValidateTTL(MinTTL), nil},
		{ValidateTTL(MaxTTL), nil},
		{ValidateTTL(MaxTTL + time.Second), ErrInvalidTTL},
	} {
		if !errors.Is(c.err, c.want) && (c.want != nil || c.err != nil) {
			t.Errorf("got %v, want %v", c.err, c.want)
		}
	}
}

func TestOptionsAreValidated(t *testing.T) {
	for _, opt := range []Option{WithShards(0), WithShards(MaxShards + 1), WithMaxActiveRooms(-1),
		WithMaxShardBytes(MinShardBytes - 1), WithMaxShardBytes(MaxShardBytes + 1), WithMaxClockSkew(-1),
		WithMaxClockSkew(MinTTL), WithMaxCASRetries(-1), WithClock(nil)} {
		if _, err := New(NewMemoryStore(), "ns", opt); err == nil {
			t.Error("an invalid option was accepted")
		}
	}
	if _, err := New(nil, "ns"); err == nil {
		t.Error("a nil store was accepted")
	}
	if _, err := New(NewMemoryStore(), "bad namespace"); err == nil {
		t.Error("an invalid namespace was accepted")
	}
}

// blockingStore blocks every shard write until released, to hold a batch in flight.
type blockingStore struct {
	*MemoryStore
	release chan struct{}
}

func (b blockingStore) CreateShard(ctx context.Context, key ShardKey, data []byte) (lease.Version, error) {
	<-b.release
	return b.MemoryStore.CreateShard(ctx, key, data)
}

func TestCancelledWhileQueued(t *testing.T) {
	store := blockingStore{NewMemoryStore(), make(chan struct{})}
	m, err := New(store, "ns")
	if err != nil {
		t.Fatal(err)
	}
	room := NewRoomID()
	first := make(chan error, 1)
	go func() {
		_, err := m.Campaign(context.Background(), room, "a", 10*time.Second, "")
		first <- err
	}()
	// Wait until the first campaign holds the shard's queue.
	for len(m.queues[m.ShardOf(room)].sem) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.Campaign(ctx, room, "b", 10*time.Second, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued campaign with an expired context: %v", err)
	}
	close(store.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if q := m.queues[m.ShardOf(room)]; len(q.pending) != 0 {
		t.Fatalf("%d ops left in the queue", len(q.pending))
	}
	st, err := m.Status(context.Background(), room)
	if err != nil || st.Leader == nil || st.Leader.CandidateID != "a" {
		t.Fatalf("status = %+v, %v", st, err)
	}
}

func TestNoSkewExpiresAtExpiresAt(t *testing.T) {
	ctx := context.Background()
	clock := &fixedClock{t: time.UnixMilli(1_700_000_000_000)}
	m, err := New(NewMemoryStore(), "ns", WithMaxClockSkew(0), WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	room := NewRoomID()
	res, err := m.Campaign(ctx, room, "a", MinTTL, "")
	if err != nil || res.Status != StatusLeader {
		t.Fatal(res, err)
	}
	clock.t = clock.t.Add(MinTTL - time.Millisecond)
	if st, _ := m.Status(ctx, room); st.Status != StatusLeader || st.RetryAfter != time.Millisecond {
		t.Fatalf("a millisecond before expiry: %+v", st)
	}
	clock.t = clock.t.Add(time.Millisecond)
	if st, _ := m.Status(ctx, room); st.Status != StatusVacant {
		t.Fatalf("at expires_at without skew: %+v", st)
	}
}

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time           { return c.t }
func (c *fixedClock) Monotonic() time.Duration { return 0 }

// conflictingStore answers every update with a conflict.
type conflictingStore struct{ *MemoryStore }

func (conflictingStore) UpdateShard(context.Context, ShardKey, []byte, lease.Version) (lease.Version, error) {
	return 0, lease.ErrConflict
}

func TestTooManyConflicts(t *testing.T) {
	ctx := context.Background()
	m, err := New(conflictingStore{NewMemoryStore()}, "ns", WithMaxCASRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	room := NewRoomID()
	res, err := m.Campaign(ctx, room, "a", MinTTL, "") // creates the shard: no update yet
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Renew(ctx, room, res.Token, MinTTL)
	if !errors.Is(err, ErrTooManyConflicts) || !errors.Is(err, lease.ErrTooManyConflicts) || !strings.Contains(err.Error(), "3 attempts") {
		t.Fatalf("renew against endless conflicts: %v", err)
	}
}

// TestShardIndexIsFNV1a: the shard of a room is FNV-1a 64 of its id modulo the shard count —
// the stored layout, which must never change.
func TestShardIndexIsFNV1a(t *testing.T) {
	for _, id := range []string{"", "a", "room-0001", strings.Repeat("Zz9_-", 13), NewRoomID(), NewRoomID()} {
		h := fnv.New64a()
		h.Write([]byte(id))
		for _, shards := range []int{1, 7, 64, MaxShards} {
			if got, want := shardIndex(id, shards), int(h.Sum64()%uint64(shards)); got != want {
				t.Errorf("room %q of %d shards: shard %d, want %d", id, shards, got, want)
			}
		}
	}
}

// TestCloneSharesNothing: a document's copy — of no room, one (kept with the copy) or several —
// can have rooms put, changed and removed without the original changing, and the other way
// round: documents are shared once written, and every write changes a copy.
func TestCloneSharesNothing(t *testing.T) {
	key := ShardKey{Namespace: "ns", Index: 0}
	for n := range 4 {
		orig := testDoc(t, key, 1, n)
		before := string(orig.encode())
		c := orig.clone()
		for id, e := range orig.Rooms.all() {
			e.Term++
			putRoom(c, id, e) // changed in place in the copy's storage
		}
		putRoom(c, "room-new-0001", roomEntry{Candidate: "c", Term: 1, ExpiresMs: 5, TTLSec: 5})
		putRoom(c, "room-new-0002", roomEntry{Candidate: "c", Term: 1, ExpiresMs: 5, TTLSec: 5})
		if got := string(orig.encode()); got != before {
			t.Fatalf("%d rooms: changing the copy changed the original:\n%s\n%s", n, before, got)
		}
		copied := string(c.encode())
		for id := range orig.Rooms.all() {
			orig.remove(id)
		}
		putRoom(orig, "room-new-0001", roomEntry{Candidate: "o", Term: 9, ExpiresMs: 9, TTLSec: 9})
		if got := string(c.encode()); got != copied {
			t.Fatalf("%d rooms: changing the original changed the copy:\n%s\n%s", n, copied, got)
		}
	}
}
