package deploy

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/images"
)

// loopbackRegistry is an in-process registry on 127.0.0.1 with tag published for both
// images; it returns the registry's HOST:PORT.
func loopbackRegistry(t *testing.T, tag string) string {
	t.Helper()
	srv := httptest.NewServer(registry.New())
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, repo := range []string{images.ControllerName, images.ControllerName + "-demo"} {
		ref, err := name.NewTag(host + "/" + repo + ":" + tag)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.WriteIndex(ref, empty.Index); err != nil {
			t.Fatal(err)
		}
	}
	return host
}

// registryConfig loads settings that point at registry with the image tag tag.
func registryConfig(t *testing.T, registry, tag string) *config.Config {
	t.Helper()
	clearEnvironment(t)
	t.Setenv("SWARM_LEASE_DEPLOY_REGISTRY", registry)
	if tag != "" {
		t.Setenv("SWARM_LEASE_DEPLOY_IMAGE_TAG", tag)
	}
	cfg, _, err := config.Load(config.Input{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAPublishedTagIsNotPushedOver(t *testing.T) {
	host := loopbackRegistry(t, "0.1.0")
	opts := &Options{Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}

	_, err := planImages(context.Background(), opts, registryConfig(t, host, "0.1.0"))
	var cerr *config.Error
	if !errors.As(err, &cerr) || cerr.Variable != "SWARM_LEASE_DEPLOY_IMAGE_TAG" || !strings.Contains(err.Error(), "already published") || !strings.Contains(err.Error(), "--no-push-images") {
		t.Fatalf("error %v, want a config error on SWARM_LEASE_DEPLOY_IMAGE_TAG saying the tag is already published", err)
	}

	p, err := planImages(context.Background(), opts, registryConfig(t, host, "0.2.0"))
	if err != nil || p.target.Tag != "0.2.0" || p.platforms == nil {
		t.Fatalf("a new tag: plan %+v, error %v, want a push of 0.2.0", p, err)
	}
}

func TestTheBuildGetsNoDeployerSettings(t *testing.T) {
	t.Setenv("SWARM_LEASE_DEPLOY_REGISTRY_TOKEN", "s3cret-token")
	var got images.Build
	opts := &Options{Now: time.Now, Publish: func(_ context.Context, b images.Build, _ images.Target) (images.Published, error) {
		got = b
		return images.Published{Controller: "c", Demo: "d"}, nil
	}}
	if err := pushImages(context.Background(), opts, &config.Config{}, &imagePlan{}); err != nil {
		t.Fatal(err)
	}
	if got.Env == nil {
		t.Fatal("Build.Env is nil: go build would inherit the whole environment")
	}
	for _, kv := range got.Env {
		if strings.HasPrefix(kv, config.Prefix) {
			t.Errorf("go build's environment holds %s", kv)
		}
	}
}

func TestImageErrorsBlameWhatFailed(t *testing.T) {
	host := loopbackRegistry(t, "0.1.0")
	opts := &Options{Now: time.Now}

	_, err := planImages(context.Background(), opts, registryConfig(t, host, "bad tag!"))
	var cerr *config.Error
	if !errors.As(err, &cerr) || cerr.Variable != "SWARM_LEASE_DEPLOY_IMAGE_TAG" || strings.Contains(err.Error(), "SWARM_LEASE_DEPLOY_REGISTRY") {
		t.Errorf("a bad tag: error %v, want a config error on SWARM_LEASE_DEPLOY_IMAGE_TAG that does not blame the registry", err)
	}

	cfg := registryConfig(t, host, "")
	cfg.ImageNamespace = "Upper/Case"
	_, err = planImages(context.Background(), opts, cfg)
	if !errors.As(err, &cerr) || cerr.Variable != "SWARM_LEASE_DEPLOY_IMAGE_NAMESPACE" {
		t.Errorf("a bad namespace: error %v, want a config error on SWARM_LEASE_DEPLOY_IMAGE_NAMESPACE", err)
	}

	opts.Publish = func(context.Context, images.Build, images.Target) (images.Published, error) {
		return images.Published{}, fmt.Errorf("%w: images: go build ./cli/cmd/x: exit status 1", images.ErrBuild)
	}
	err = pushImages(context.Background(), opts, registryConfig(t, host, "0.2.0"), &imagePlan{})
	if err == nil || !strings.Contains(err.Error(), "building the images failed") || strings.Contains(err.Error(), "registry") {
		t.Errorf("a failed build: error %v, want a build error that does not blame the registry", err)
	}
}

// A registry whose token service echoes the credentials it was sent — base64 in a Basic
// header, URL-encoded in a query — gets none of them into the deployer's error.
func TestRegistryErrorsHoldNoSecret(t *testing.T) {
	const token = "dckr_pat_Echoed+Token/0123456789="
	var realm string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			user, password, _ := r.BasicAuth()
			http.Error(w, fmt.Sprintf("refused %s (%s, %s)", r.Header.Get("Authorization"), url.QueryEscape(password), user), http.StatusUnauthorized)
			return
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q,service="registry"`, realm))
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	realm = srv.URL + "/token"
	cfg := registryConfig(t, strings.TrimPrefix(srv.URL, "http://"), "")
	cfg.RegistryUsername, cfg.RegistryToken = "pusher", token
	_, err := planImages(context.Background(), &Options{Now: time.Now}, cfg)
	if err == nil || !strings.Contains(err.Error(), "refused Basic") || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("plan against the echoing registry: %v, want its refusal redacted", err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("pusher:" + token))
	for _, s := range []string{token, basic, url.QueryEscape(token)} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("the error holds %q: %v", s, err)
		}
	}
}
