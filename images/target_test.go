package images

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// staticKeychain gives one set of credentials for every registry.
type staticKeychain struct{ auth authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }

// basicAuthRegistry is an in-process registry that answers 401 without the user and token.
func basicAuthRegistry(user, token string) http.Handler {
	reg := registry.New()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	})
}

// TestPublishToAndResolve pushes with a target's own credentials to a registry that demands
// them, and resolves the tags to the pushed digests; a tag that was never pushed is
// ErrNotPublished.
func TestPublishToAndResolve(t *testing.T) {
	long(t, "builds both images' binaries")
	srv := httptest.NewServer(basicAuthRegistry("pusher", "s3cret"))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.Background()
	good := staticKeychain{&authn.Basic{Username: "pusher", Password: "s3cret"}}

	target := Target{Registry: host + "/team", Tag: "v9", Keychain: good}
	if _, err := Resolve(ctx, target); !errors.Is(err, ErrNotPublished) {
		t.Fatalf("resolve before publishing: %v, want ErrNotPublished", err)
	}
	b := Build{Root: repoRoot(t), Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}}
	bad := Target{Registry: host + "/team", Tag: "v9", Keychain: staticKeychain{&authn.Basic{Username: "pusher", Password: "wrong"}}}
	if _, err := PublishTo(ctx, b, bad); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("push with a wrong token: %v, want an error without the token", err)
	}
	pub, err := PublishTo(ctx, b, target)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pub.Demo, host+"/team/lfp-swarm-lease-demo@sha256:") {
		t.Errorf("demo %s, want %s/team/lfp-swarm-lease-demo@sha256:…", pub.Demo, host)
	}
	got, err := Resolve(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if got != pub {
		t.Errorf("resolved %+v, want the pushed %+v", got, pub)
	}
}
