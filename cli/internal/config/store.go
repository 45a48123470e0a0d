package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
)

// storeWant is what a store setting may be, for error messages.
const storeWant = "want swarm, etcd://HOST:PORT[,HOST:PORT…][/PREFIX], memory, file:///absolute/dir (or file://localhost/absolute/dir), or file:relative/dir (or file://./relative/dir) for a directory relative to the working directory"

// ErrStoreCredentials is a store URL with a user, a password or a query in it: a URL is logged
// and shown in process lists, so credentials never belong there. The value is never quoted.
var ErrStoreCredentials = errors.New("config: credentials in the store URL")

// ParseStore reads a store setting: swarm, memory, an etcd URL
// (etcd://HOST:PORT[,HOST:PORT…][/PREFIX], etcdstore.ParseURL; one with a user, a password, a
// query or a fragment in it is ErrStoreCredentials), or a file URL by RFC 8089 — file:///abs and
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
	if strings.HasPrefix(value, "etcd:") {
		if _, err := parseEtcdURL(value); err != nil {
			return "", "", err
		}
		return StoreEtcd, "", nil
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

// parseEtcdURL reads an etcd store URL. One holding '@', '?' or '#' is ErrStoreCredentials
// before anything else is looked at: the user and password of etcd are settings of their own
// (etcd_username, etcd_password), and the URL is quoted in messages and logs.
func parseEtcdURL(value string) (etcdstore.Options, error) {
	if strings.ContainsAny(value, "@?#") {
		return etcdstore.Options{}, ErrStoreCredentials
	}
	o, err := etcdstore.ParseURL(value)
	if err != nil {
		return etcdstore.Options{}, errors.New(strings.TrimPrefix(err.Error(), "etcd store: "))
	}
	return o, nil
}

// redactStore is a store setting as messages may quote it: what comes before its last '@' (a
// URL's user and password) replaced by "REDACTED", and in an etcd URL what comes from its first
// '?' or '#' on (a query, which could carry them too).
func redactStore(value string) string {
	if at := strings.LastIndexByte(value, '@'); at >= 0 {
		head := "REDACTED"
		if scheme, _, ok := strings.Cut(value[:at], ":"); ok && !strings.Contains(scheme, "/") {
			head = scheme + "://REDACTED"
		}
		value = head + value[at:]
	}
	if i := strings.IndexAny(value, "?#"); i >= 0 && strings.HasPrefix(value, "etcd:") {
		value = value[:i] + "?REDACTED"
	}
	return value
}
