package serve

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/regbo/lfp-swarm-lease/server/connlimit"
)

// controllerProxy forwards the page's /v1/state and /v1/events to the controller service (its
// VIP on the stack's network), so the page needs one origin and the controllers need no CORS.
// FlushInterval -1 flushes every write at once: each SSE event reaches the page when it is sent.
// The transport reaches a replica that answers (package controllers): a paused controller does
// not stall the page's reconnects.
func controllerProxy(controller string, transport http.RoundTripper, log *slog.Logger) (http.Handler, error) {
	target, err := url.Parse(controller)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("controller URL %q: want http://HOST:PORT (the controller service, e.g. http://controller:8080)", controller)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		FlushInterval: -1,
		Transport:     transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn("controller unreachable", "path", r.URL.Path, "err", err)
			writeJSON(w, http.StatusBadGateway, map[string]string{"error": "the controller service cannot be reached", "code": "controller_unreachable"})
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/events" {
			// A stream holds its connection for as long as the page is open: at the connection
			// bound it may be shed (the page reconnects) rather than refuse a worker's write.
			connlimit.MarkStream(r.Context())
		}
		proxy.ServeHTTP(w, r)
	}), nil
}
