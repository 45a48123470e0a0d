package filestore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// TestShardFileIsJoinsPath: the hand-built paths of a shard's files and of the version table
// are what filepath.Join and "%02d" give, the root directory included.
func TestShardFileIsJoinsPath(t *testing.T) {
	for _, dir := range []string{"/", "/var/lib/lease", "/tmp/a.b"} {
		s := &Store{dir: dir}
		for _, key := range []rooms.ShardKey{{Namespace: "default", Index: 0}, {Namespace: "A.b_c-9", Index: 9},
			{Namespace: "n", Index: 10}, {Namespace: "x", Index: rooms.MaxShards - 1}} {
			if got, want := s.versionTablePath(key.Namespace), filepath.Join(dir, key.Namespace+".rooms.versions"); got != want {
				t.Errorf("versionTablePath(%q, %q) = %q, want %q", dir, key.Namespace, got, want)
			}
			for _, suffix := range []string{"lock", "a", "b"} {
				want := filepath.Join(dir, fmt.Sprintf("%s.rooms-%02d.%s", key.Namespace, key.Index, suffix))
				if got := s.shardFile(key, suffix); got != want {
					t.Errorf("shardFile(%q, %+v, %q) = %q, want %q", dir, key, suffix, got, want)
				}
			}
		}
	}
}
