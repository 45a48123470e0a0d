package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseStore(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value   string
		kind    StoreKind
		dir     string
		wantErr string
	}{
		{"swarm", StoreSwarm, "", ""},
		{"memory", StoreMemory, "", ""},
		{"etcd://127.0.0.1:2379", StoreEtcd, "", ""},
		{"etcd://a:1,b:2,[::1]:3/team/leases", StoreEtcd, "", ""},
		{"etcd://u:p@a:1", "", "", "credentials"},
		{"etcd://a:1?x", "", "", "credentials"},
		{"etcd://a", "", "", "HOST:PORT"},
		{"etcd:a:1", "", "", "etcd://"},
		{"file:///var/lib/x", StoreFile, "/var/lib/x", ""},
		{"file://localhost/var/lib/x", StoreFile, "/var/lib/x", ""},
		{"file:/var/lib/x", StoreFile, "/var/lib/x", ""},
		{"file:///var/lib/x/../y/", StoreFile, "/var/lib/y", ""},
		{"file:///var/lib/with%20space%23hash", StoreFile, "/var/lib/with space#hash", ""},
		{"file:rel/dir", StoreFile, filepath.Join(wd, "rel/dir"), ""},
		{"file:./rel", StoreFile, filepath.Join(wd, "rel"), ""},
		{"file:with%20space", StoreFile, filepath.Join(wd, "with space"), ""},
		{"file://./rel/dir", StoreFile, filepath.Join(wd, "rel/dir"), ""},
		{"file://./with%20space/", StoreFile, filepath.Join(wd, "with space"), ""},
		{"file://../up", "", "", `host ".."`},
		{"file://otherhost/x", "", "", `host "otherhost"`},
		{"file://relative/dir", "", "", "file:relative/dir"},
		{"file:///x?mode=rw", "", "", "no query"},
		{"file:///x?", "", "", "no query"},
		{"file:///x#frag", "", "", "no fragment"},
		{"file:///x#", "", "", "no fragment"},
		{"file://user@localhost/x", "", "", "no user"},
		{"file:///", "", "", "root directory"},
		{"file://localhost/", "", "", "root directory"},
		{"file:///a/..", "", "", "root directory"},
		{"file://", "", "", "no directory"},
		{"file:///bad%zz", "", "", "want swarm"},
		{"postgres://x", "", "", "want swarm"},
		{"", "", "", "want swarm"},
		{"/var/lib/x", "", "", "want swarm"},
	} {
		kind, dir, err := ParseStore(tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseStore(%q) = %q, %q, %v; want an error with %q", tc.value, kind, dir, err, tc.wantErr)
			}
			continue
		}
		if err != nil || kind != tc.kind || dir != tc.dir {
			t.Errorf("ParseStore(%q) = %q, %q, %v; want %q, %q", tc.value, kind, dir, err, tc.kind, tc.dir)
		}
	}
}

func TestFileStoreURLRoundTrips(t *testing.T) {
	for _, dir := range []string{"/var/lib/lfp-swarm-lease", "/home/a b/#x?y%z/.local/share"} {
		kind, got, err := ParseStore(FileStoreURL(dir))
		if err != nil || kind != StoreFile || got != dir {
			t.Errorf("ParseStore(FileStoreURL(%q)) = %q, %q, %v", dir, kind, got, err)
		}
	}
}

func TestRedactStore(t *testing.T) {
	for in, want := range map[string]string{
		"etcd://a:1/x":               "etcd://a:1/x",
		"etcd://u:pw@a:1":            "etcd://REDACTED@a:1",
		"etcd://u:p/w@a:1/x":         "etcd://REDACTED@a:1/x",
		"etcd://u:p@w@a:1":           "etcd://REDACTED@a:1",
		"etcd://a:1/x?password=pw":   "etcd://a:1/x?REDACTED",
		"etcd://a:1#pw":              "etcd://a:1?REDACTED",
		"u:pw@a:1":                   "u://REDACTED@a:1",
		"pw@a:1":                     "REDACTED@a:1",
		"file://user:pw@localhost/x": "file://REDACTED@localhost/x",
		"file:///x?mode=rw":          "file:///x?mode=rw",
		"swarm":                      "swarm",
	} {
		if got := redactStore(in); got != want {
			t.Errorf("redactStore(%q) = %q, want %q", in, got, want)
		}
	}
}
