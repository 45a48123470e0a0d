package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// storeWant is what a store setting may be, for error messages.
const storeWant = "want swarm, memory, file:///absolute/dir (or file://localhost/absolute/dir), or file:relative/dir (or file://./relative/dir) for a directory relative to the working directory"

// ParseStore reads a store setting: swarm, memory, or a file URL by RFC 8089 — file:///abs and
// file://localhost/abs name /abs; any other host is refused (the file store is one host's),
// as are a query, a fragment, credentials and the root directory itself; the path is
// percent-decoded. file:rel/dir (no "//") is the explicit form of a directory relative to the
// working directory, and file://./rel/dir (the authority ".") the form other tools use for it. The directory returned is absolute and clean, so that two processes given
// the same setting in different directories share one store — or are told why not.
func ParseStore(value string) (StoreKind, string, error) {
	switch value {
	case string(StoreSwarm):
		return StoreSwarm, "", nil
	case string(StoreMemory):
		return StoreMemory, "", nil
	}
	u, err := url.Parse(value)
	if err != nil || u.Scheme != "file" {
		return "", "", errors.New(storeWant)
	}
	var dir string
	switch {
	case u.RawQuery != "" || u.ForceQuery:
		return "", "", errors.New("a file store URL takes no query ('?'): percent-encode it as %3F if it is part of the directory")
	case u.Fragment != "" || strings.Contains(value, "#"):
		return "", "", errors.New("a file store URL takes no fragment ('#'): percent-encode it as %23 if it is part of the directory")
	case u.User != nil:
		return "", "", errors.New("a file store URL takes no user or password")
	case u.Opaque != "":
		// file:rel/dir — no authority: relative to the working directory, on purpose.
		if dir, err = url.PathUnescape(u.Opaque); err != nil {
			return "", "", fmt.Errorf("bad percent-encoding in %q: %w", u.Opaque, err)
		}
		if filepath.IsAbs(dir) {
			return "", "", fmt.Errorf("file:%s is neither form: write file://%s for an absolute directory", u.Opaque, u.Opaque)
		}
		if dir, err = filepath.Abs(dir); err != nil {
			return "", "", err
		}
	case u.Host == ".":
		// file://./rel — "." as the authority: relative to the working directory, as in
		// file:rel.
		if dir, err = filepath.Abs("." + u.Path); err != nil {
			return "", "", err
		}
	case u.Host != "" && u.Host != "localhost":
		return "", "", fmt.Errorf("host %q in a file URL: the file store is this host's only; for an absolute directory write file:///%s, for one relative to the working directory file:%s or file://./%s",
			u.Host, strings.TrimPrefix(u.Host+u.Path, "/"), strings.TrimPrefix(u.Host+u.Path, "/"), strings.TrimPrefix(u.Host+u.Path, "/"))
	case u.Path == "":
		return "", "", errors.New("the file URL names no directory: " + storeWant)
	default:
		dir = u.Path // absolute: the authority is empty or localhost
	}
	dir = filepath.Clean(dir)
	if dir == string(filepath.Separator) {
		return "", "", errors.New("the file store must not be the root directory itself: name a directory of its own, e.g. file:///var/lib/lfp-swarm-lease")
	}
	return StoreFile, dir, nil
}

// FileStoreURL is the store setting of the file store in dir (absolute), percent-encoded so
// that ParseStore returns dir again whatever characters it holds.
func FileStoreURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}
