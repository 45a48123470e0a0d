package etcdstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of Options.
const (
	// DefaultPrefix is the key prefix when the URL names none.
	DefaultPrefix = "/lfp-swarm-lease"
	// DefaultDialTimeout bounds the first connection to a member.
	DefaultDialTimeout = 5 * time.Second
	// DefaultRequestTimeout bounds one request. etcd's own proposal timeout is about 7 s with
	// its default election timeout; a write cut short by this one is reported as ambiguous.
	DefaultRequestTimeout = 5 * time.Second
)

// Options configure a Store. ParseURL fills Endpoints and Prefix from an etcd:// URL; the other
// fields are settings of their own.
type Options struct {
	// Endpoints are the members' client addresses, "host:port" (or URLs with http/https).
	Endpoints []string
	// Prefix is prepended to every key; it starts with '/' and does not end with one (default
	// DefaultPrefix). Several deployments can share a cluster under different prefixes.
	Prefix string
	// DialTimeout bounds establishing a connection (default DefaultDialTimeout).
	DialTimeout time.Duration
	// RequestTimeout bounds each request to the cluster (default DefaultRequestTimeout).
	RequestTimeout time.Duration
	// CAFile is a PEM file of the CA that signed the members' certificates; set, the client
	// speaks TLS.
	CAFile string
	// CertFile and KeyFile are the client's certificate and key (PEM), for clusters that
	// authenticate clients by certificate; both or neither. Either turns TLS on.
	CertFile, KeyFile string
	// Username and Password authenticate against etcd's own user store; both or neither.
	Username, Password string
	// Dial, when set, opens the connections to the members (addr is an endpoint's
	// "host:port") instead of a plain TCP dial: members reached through another network
	// namespace, as in the fault campaign, or through a tunnel of the caller's own. TLS, when
	// set, runs over the connection it returns.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
}

// ParseURL reads `etcd://HOST:PORT[,HOST:PORT…][/PREFIX]`. The prefix defaults to
// DefaultPrefix; timeouts take their defaults. Credentials do not belong in the URL (it is
// logged): set Options.Username and Password, or the TLS files, from settings.
func ParseURL(raw string) (Options, error) {
	bad := func(reason string) error {
		return fmt.Errorf("etcd store: invalid URL %q: %s (want etcd://HOST:PORT[,HOST:PORT…][/PREFIX])", raw, reason)
	}
	rest, ok := strings.CutPrefix(raw, "etcd://")
	if !ok {
		return Options{}, bad("the scheme must be etcd://")
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if strings.ContainsAny(hosts, "@?#") || strings.ContainsAny(path, "?#") {
		return Options{}, bad("no user, query or fragment")
	}
	if hosts == "" {
		return Options{}, bad("no endpoint")
	}
	o := Options{Prefix: DefaultPrefix}
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" || port == "" {
			return Options{}, bad(fmt.Sprintf("endpoint %q is not HOST:PORT", h))
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Options{}, bad(fmt.Sprintf("endpoint %q: the port must be a number from 1 to 65535", h))
		}
		o.Endpoints = append(o.Endpoints, h)
	}
	if path != "" {
		p, err := url.PathUnescape(path)
		if err != nil {
			return Options{}, bad(err.Error())
		}
		o.Prefix = "/" + strings.TrimSuffix(p, "/")
	}
	return o, o.validate()
}

// withDefaults returns o with its zero durations and prefix set to the defaults.
func (o Options) withDefaults() Options {
	o.Prefix = cmp.Or(o.Prefix, DefaultPrefix)
	o.DialTimeout = cmp.Or(o.DialTimeout, DefaultDialTimeout)
	o.RequestTimeout = cmp.Or(o.RequestTimeout, DefaultRequestTimeout)
	return o
}

// validate checks o after defaults.
func (o Options) validate() error {
	var errs []error
	if len(o.Endpoints) == 0 {
		errs = append(errs, errors.New("etcd store: at least one endpoint is required"))
	}
	if !strings.HasPrefix(o.Prefix, "/") || (len(o.Prefix) > 1 && strings.HasSuffix(o.Prefix, "/")) || strings.Contains(o.Prefix, "//") {
		errs = append(errs, fmt.Errorf("etcd store: prefix %q must start with '/' and not end with one", o.Prefix))
	}
	if o.DialTimeout < 0 || o.RequestTimeout < 0 {
		errs = append(errs, errors.New("etcd store: timeouts must not be negative"))
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		errs = append(errs, errors.New("etcd store: set both the client certificate and its key, or neither"))
	}
	if (o.Username == "") != (o.Password == "") {
		errs = append(errs, errors.New("etcd store: set both the user name and the password, or neither"))
	}
	return errors.Join(errs...)
}

// tls reports whether the client speaks TLS.
func (o Options) tls() bool { return o.CAFile != "" || o.CertFile != "" }

// String describes o for logs, without secrets.
func (o Options) String() string {
	s := "etcd store " + strings.Join(o.Endpoints, ",") + " prefix " + o.Prefix
	if o.tls() {
		s += " (TLS)"
	}
	return s
}
