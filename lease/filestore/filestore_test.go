package filestore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

func TestElectionSuite(t *testing.T) {
	leasetest.RunElectionSuite(t, func(t *testing.T) lease.Store {
		s, err := filestore.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestCorruptFileIsNeverOverwritten: a file the store cannot read as a record of this election —
// not a lease file, slots whose checksums hold around content that is not this election's
// record, no whole slot — fails every write with a CorruptError naming it, and is left exactly
// as it was.
func TestCorruptFileIsNeverOverwritten(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := lease.New(store, "jobs", lease.Identity{HolderID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.TryAcquire(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "jobs.lease.json")
	// Both slots rewritten with content whose checksum holds.
	bothSlots := func(edit func(string) string) func([]byte) []byte {
		return func(file []byte) []byte {
			return filestore.RewriteSlots(t, file, func(_ int, content string) string { return edit(content) })
		}
	}
	for name, edit := range map[string]func([]byte) []byte{
		"garbage":   func([]byte) []byte { return []byte("{not json") },
		"empty":     func([]byte) []byte { return nil },
		"bad fence": bothSlots(func(s string) string { return strings.Replace(s, `"fence":`, `"fence":"x`, 1) }),
		"other ns":  bothSlots(func(s string) string { return strings.Replace(s, `"namespace":"jobs"`, `"namespace":"other"`, 1) }),
		"schema":    bothSlots(func(s string) string { return strings.Replace(s, `"schema":2`, `"schema":9`, 1) }),
		"no whole slot": func(file []byte) []byte {
			out := slices.Clone(file)
			for i := range 2 {
				out[i*len(file)/2+100] ^= 0xff
			}
			return out
		},
		"odd size": func(file []byte) []byte { return file[:len(file)-1] },
	} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(path, orig, 0o600)
			bad := edit(orig)
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, op := range []func() error{
				func() error { _, err := e.TryAcquire(ctx); return err },
				func() error { _, _, err := store.Load(ctx, "jobs"); return err },
			} {
				err := op()
				var corrupt *lease.CorruptError
				if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), path) {
					t.Fatalf("%v; want a CorruptError naming %s", err, path)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, bad) {
				t.Fatalf("the corrupt file was modified:\n%q", after)
			}
		})
	}
}
