package filestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	for name, edit := range map[string]func(string) string{
		"garbage":   func(string) string { return "{not json" },
		"bad fence": func(s string) string { return strings.Replace(s, `"fence": `, `"fence": "x`, 1) },
		"other ns":  func(s string) string { return strings.Replace(s, `"namespace": "jobs"`, `"namespace": "other"`, 1) },
		"schema":    func(s string) string { return strings.Replace(s, `"schema": 1`, `"schema": 9`, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(path, orig, 0o600)
			bad := edit(string(orig))
			if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = e.TryAcquire(ctx)
			var corrupt *lease.CorruptError
			if !errors.As(err, &corrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("try-acquire on a corrupt file: %v; want a CorruptError naming %s", err, path)
			}
			if after, _ := os.ReadFile(path); string(after) != bad {
				t.Fatalf("the corrupt file was modified:\n%s", after)
			}
		})
	}
}
