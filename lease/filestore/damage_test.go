package filestore_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestDamagedNewestSlotNeverRepeatsATerm: whatever happens to the newest slot of a shard —
// truncated, zeroed, deleted, one byte changed — a store reopened on the directory (a restarted
// server) issues a next term above every term acknowledged before, and reports the slot.
func TestDamagedNewestSlotNeverRepeatsATerm(t *testing.T) {
	damages := map[string]func(t *testing.T, path string){
		"truncated":            func(t *testing.T, path string) { mustTruncate(t, path, 40) },
		"truncated to nothing": func(t *testing.T, path string) { mustTruncate(t, path, 0) },
		"zeroed": func(t *testing.T, path string) {
			data := mustRead(t, path)
			mustWrite(t, path, make([]byte, len(data)))
		},
		"deleted": func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		},
		"one content byte changed": func(t *testing.T, path string) {
			data := mustRead(t, path)
			i := bytes.LastIndex(data, []byte(`"c":"b"`)) + len(`"c":"`)
			data[i] = 'x'
			mustWrite(t, path, data)
		},
		"one header byte changed": func(t *testing.T, path string) {
			data := mustRead(t, path)
			// The last digit of the header's version.
			i := bytes.IndexByte(data, ' ') + len(" 1 ")
			i += bytes.IndexByte(data[i:], ' ') - 1
			data[i] = '0' + (data[i]-'0'+1)%10
			mustWrite(t, path, data)
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			m1 := newRoomsManager(t, openStore(t, dir))
			room := rooms.NewRoomID()
			neighbour := room
			for neighbour == room || m1.ShardOf(neighbour) != m1.ShardOf(room) {
				neighbour = rooms.NewRoomID()
			}
			if _, err := m1.Campaign(ctx, room, "a", 30*time.Second, ""); err != nil {
				t.Fatal(err)
			}
			b, err := m1.Campaign(ctx, neighbour, "b", 30*time.Second, "")
			if err != nil || b.Status != rooms.StatusLeader {
				t.Fatalf("campaign b: %+v, %v", b, err)
			}
			// The shard's first write is in slot a, the second (b's term) in slot b.
			newest := filepath.Join(dir, m1.Namespace()+".rooms-"+twoDigits(m1.ShardOf(room))+".b")
			if !strings.Contains(string(mustRead(t, newest)), `"c":"b"`) {
				t.Fatalf("slot b does not hold b's term: %s", mustRead(t, newest))
			}
			damage(t, newest)

			s2 := openStore(t, dir)
			var mu sync.Mutex
			var reports []rooms.Damage
			s2.OnDamage(func(d rooms.Damage) { mu.Lock(); reports = append(reports, d); mu.Unlock() })
			m2 := newRoomsManager(t, s2)
			// A read alone reports it (the lock is free: no write is in progress).
			if st, err := m2.Status(ctx, neighbour); err != nil || st.Status != rooms.StatusVacant {
				t.Fatalf("status after the damage: %+v, %v; want the surviving slot's vacant room", st, err)
			}
			mu.Lock()
			if len(reports) != 1 {
				t.Errorf("a read after the damage made %d reports, want 1", len(reports))
			}
			mu.Unlock()
			c, err := m2.Campaign(ctx, neighbour, "c", 30*time.Second, "")
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != rooms.StatusLeader {
				t.Fatalf("campaign c: %+v; the surviving slot has the room vacant", c)
			}
			if c.Leader.Term <= b.Leader.Term {
				t.Fatalf("term %d issued after the damage, but term %d was acknowledged before it", c.Leader.Term, b.Leader.Term)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) != 1 || reports[0].Where != newest || reports[0].At.IsZero() {
				t.Fatalf("reports %+v, want one (the campaign's write repeats none) naming %s", reports, newest)
			}
			t.Logf("reported: %s: %s", reports[0].Where, reports[0].Reason)
		})
	}
}

func newRoomsManager(t *testing.T, s *filestore.Store) *rooms.Manager {
	t.Helper()
	m, err := rooms.New(s, "damage", rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func openStore(t *testing.T, dir string) *filestore.Store {
	t.Helper()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func twoDigits(i int) string { return string([]byte{'0' + byte(i/10), '0' + byte(i%10)}) }

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustWrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustTruncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}
