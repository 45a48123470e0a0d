package portainer

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/settings"
)

// Options configures a Client. Exactly one authentication mode must be set: APIKey, or
// Username with Password.
type Options struct {
	// URL is Portainer's base address, e.g. https://host:9443; the client appends /api. It
	// must not carry credentials.
	URL string
	// APIKey (preferred) is sent as the X-API-Key header.
	APIKey Secret
	// Username and Password are the fallback: the client logs in once (POST /api/auth) for a
	// JWT, sends it as a Bearer token, and logs in again once when Portainer answers 401.
	Username string
	// Password is Username's password.
	Password Secret
	// CAFile is a PEM bundle of the CAs that sign Portainer's certificate (default: the
	// system's roots).
	CAFile string
	// InsecureSkipVerify turns off certificate verification (test servers only).
	InsecureSkipVerify bool
	// HTTPClient replaces the client's own (tests). It must have no cookie jar; CAFile and
	// InsecureSkipVerify do not apply to it.
	HTTPClient *http.Client
	// Logger receives one debug line per request (method, path, status, duration) and never a
	// credential or a body. Default: no logging.
	Logger *slog.Logger
}

// Client calls one Portainer server. It is safe for concurrent use.
type Client struct {
	base   *url.URL // …/api, without credentials
	http   *http.Client
	log    *slog.Logger
	apiKey Secret
	user   string
	pass   Secret

	mu  sync.Mutex
	jwt Secret // the current login's token; empty until the first call that needs one
}

// maxCAFile bounds the CA bundle: the system's whole bundle is some 200 KiB.
const maxCAFile = 1 << 20

// Timeouts of the client's own transport: connecting and the TLS handshake are quick or
// broken; a stack deploy can take minutes (Portainer answers once `docker stack deploy` has
// run, which resolves every image in its registry).
const (
	dialTimeout           = 10 * time.Second
	tlsHandshakeTimeout   = 10 * time.Second
	responseHeaderTimeout = 5 * time.Minute
)

// New validates o and returns a client. It sends nothing.
func New(o Options) (*Client, error) {
	base, err := parseBaseURL(o.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case o.APIKey != "" && (o.Username != "" || o.Password != ""):
		return nil, errors.New("portainer: Options: set either APIKey or Username/Password, not both (Portainer refuses a request that carries both an API key and a JWT)")
	case o.APIKey == "" && o.Username == "" && o.Password == "":
		return nil, errors.New("portainer: Options: no credentials: set APIKey (preferred; create one under My account → Access tokens) or Username and Password")
	case o.APIKey == "" && o.Username == "":
		return nil, errors.New("portainer: Options: Password is set but Username is empty")
	case o.APIKey == "" && o.Password == "":
		return nil, errors.New("portainer: Options: Username is set but Password is empty")
	}
	hc := o.HTTPClient
	if hc != nil {
		if hc.Jar != nil {
			return nil, errors.New("portainer: Options.HTTPClient has a cookie jar: Portainer's login cookie makes every later request fail its CSRF check; pass a client without a Jar")
		}
		if o.CAFile != "" || o.InsecureSkipVerify {
			return nil, errors.New("portainer: Options: CAFile and InsecureSkipVerify configure the client's own transport and do not apply to HTTPClient; set them on HTTPClient's transport instead")
		}
	} else {
		if hc, err = newHTTPClient(base, o.CAFile, o.InsecureSkipVerify); err != nil {
			return nil, err
		}
	}
	log := o.Logger
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return &Client{base: base, http: hc, log: log, apiKey: o.APIKey, user: o.Username, pass: o.Password}, nil
}

// parseBaseURL checks Options.URL and returns it with /api appended.
func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("portainer: Options.URL is empty: give Portainer's address, e.g. https://portainer.example.com:9443")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the whole URL, credentials included.
		return nil, errors.New("portainer: Options.URL is not a valid URL: give Portainer's address, e.g. https://portainer.example.com:9443")
	}
	if u.User != nil {
		return nil, errors.New("portainer: Options.URL carries credentials (user:password@): remove them and set APIKey or Username/Password instead")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("portainer: Options.URL %q: the scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("portainer: Options.URL %q has no host", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("portainer: Options.URL %q: remove the query and fragment; give the server's base address", u.Redacted())
	}
	path := strings.TrimRight(u.Path, "/")
	if strings.HasSuffix(path, "/api") {
		return nil, fmt.Errorf("portainer: Options.URL %q ends in /api: give the server's base address; the client appends /api", u.Redacted())
	}
	u.Path = path + "/api"
	u.RawPath = ""
	return u, nil
}

// newHTTPClient builds the client's own HTTP client: no cookie jar (see the package comment),
// no redirects (Go forwards custom headers such as X-API-Key to a redirect's target), bounded
// timeouts.
func newHTTPClient(base *url.URL, caFile string, insecure bool) (*http.Client, error) {
	if caFile != "" && insecure {
		return nil, errors.New("portainer: Options: CAFile and InsecureSkipVerify contradict each other: set one")
	}
	if (caFile != "" || insecure) && base.Scheme != "https" {
		return nil, fmt.Errorf("portainer: Options: CAFile/InsecureSkipVerify apply to https, but URL %q is %s", base.Redacted(), base.Scheme)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		// A CA bundle is some KiB; settings.ReadFile makes a wrong path (a device, a pipe, a
		// log) fail at once, with a *settings.FileError that the caller can name the setting in.
		pem, err := settings.ReadFile(caFile, maxCAFile)
		if err != nil {
			return nil, fmt.Errorf("portainer: Options.CAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("portainer: Options.CAFile %s holds no PEM certificate: give the CA bundle that signs Portainer's certificate", caFile)
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}
