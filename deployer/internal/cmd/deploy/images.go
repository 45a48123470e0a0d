package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/childenv"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/config"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/redact"
	"github.com/regbo/lfp-swarm-lease/images"
)

// placeholderDigest stands for the demo image's digest before it is pushed: the stack is
// rendered and validated with it before anything remote changes.
const placeholderDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// staticKeychain gives the configured registry credentials for every registry. They stay in
// this process's memory: go-containerregistry sends them, no docker login or CLI argument.
type staticKeychain struct{ auth authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }

// keychain is the configured registry user and token, or the machine's Docker credentials.
func keychain(cfg *config.Config) authn.Keychain {
	if cfg.RegistryUsername == "" {
		return authn.DefaultKeychain
	}
	return staticKeychain{&authn.Basic{Username: cfg.RegistryUsername, Password: string(cfg.RegistryToken)}}
}

// imagePlan is what happens to the images.
type imagePlan struct {
	target images.Target
	// platforms are built and pushed; nil when the images are already published.
	platforms []v1.Platform
	// published are the images' digests: resolved when already published, else known after
	// the push.
	published images.Published
}

// platformNames reads "linux/amd64, linux/arm64".
func platformNames(ps []v1.Platform) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}

// checkImageFlags checks, before anything is read, that --no-push-images has a tag to deploy.
func checkImageFlags(opts *Options, cfg *config.Config) error {
	if opts.NoPushImages && cfg.ImageTag == "" {
		return &config.Error{Variable: "SWARM_LEASE_DEPLOY_IMAGE_TAG", Problem: "--no-push-images deploys images that are already published, so it needs their tag", Fix: "pass --image-tag VERSION (e.g. 0.1.0)"}
	}
	if opts.NoPushImages && opts.NoBuildArm {
		return &config.Error{Variable: "--no-build-arm", Problem: "--no-push-images builds nothing", Fix: "drop --no-build-arm"}
	}
	return nil
}

// planImages decides the image step and does every read that proves it: with
// --no-push-images the published tag's digests (a missing tag is an error), otherwise that
// the registry answers. It pushes nothing.
func planImages(ctx context.Context, opts *Options, cfg *config.Config) (imagePlan, error) {
	p := imagePlan{target: images.Target{Registry: cfg.Repository(), Tag: cfg.ImageTag, Keychain: keychain(cfg)}}
	if opts.NoPushImages {
		pub, err := images.Resolve(ctx, p.target)
		if errors.Is(err, images.ErrNotPublished) {
			return imagePlan{}, fmt.Errorf("the published images of SWARM_LEASE_DEPLOY_IMAGE_TAG (from %s): %w", cfg.Source("image_tag"), err)
		}
		if err != nil {
			return imagePlan{}, imageError(cfg, err)
		}
		p.published = pub
		return p, nil
	}
	if p.target.Tag == "" {
		p.target.Tag = defaultTag(opts)
	}
	p.platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
	if opts.NoBuildArm {
		p.platforms = p.platforms[:1]
	}
	// A read of the tag to be pushed proves that the registry answers and takes the
	// credentials; that the tag is not there yet is the expected answer. A tag that is there
	// is refused: pushing would move it under whatever stack was deployed from it.
	_, err := images.Resolve(ctx, p.target)
	switch {
	case err == nil:
		return imagePlan{}, &config.Error{Variable: "SWARM_LEASE_DEPLOY_IMAGE_TAG", Source: cfg.Source("image_tag"), Problem: fmt.Sprintf("%q is already published in %s", p.target.Tag, p.target.Registry), Fix: "use --no-push-images to deploy it, or choose another tag"}
	case !errors.Is(err, images.ErrNotPublished):
		return imagePlan{}, imageError(cfg, err)
	}
	return p, nil
}

// imageError blames what failed: a build error is the build's, a reference that does not parse
// is a setting to fix, and only the rest — the registry's answers and the network — is the
// registry's. A registry's answer is quoted, and a registry (or its token service) may echo the
// credentials it was sent: every secret setting is redacted from the error, in every form.
func imageError(cfg *config.Config, err error) error {
	return redact.Error(blameImageError(cfg, err), secrets(cfg)...)
}

// secrets are the values of the secret settings — every portainer.Secret of the settings,
// whether it came from a variable, a _FILE or .env — for redaction.
func secrets(cfg *config.Config) []string {
	v := reflect.ValueOf(cfg).Elem()
	var out []string
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeFor[portainer.Secret]() {
			out = append(out, f.String())
		}
	}
	return out
}

// blameImageError is imageError before redaction.
func blameImageError(cfg *config.Config, err error) error {
	switch {
	case errors.Is(err, images.ErrBuild):
		return fmt.Errorf("building the images failed (nothing was pushed): %w", err)
	case errors.Is(err, images.ErrReference):
		key := "image_namespace"
		if _, terr := name.NewTag("example.com/image:" + cfg.ImageTag); cfg.ImageTag != "" && terr != nil {
			key = "image_tag"
		}
		return &config.Error{Variable: config.Prefix + strings.ToUpper(key), Source: cfg.Source(key), Problem: err.Error(), Fix: "use letters, digits, ., _ and - (a tag: at most 128, not starting with . or -; a namespace: lower case, / between parts)"}
	}
	return registryError(cfg, err)
}

// registryError names the registry settings to check: the credentials when the registry
// refused them, else the address.
func registryError(cfg *config.Config, err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden) {
		who := "the machine's Docker credentials (set SWARM_LEASE_DEPLOY_REGISTRY_USERNAME and SWARM_LEASE_DEPLOY_REGISTRY_TOKEN to use others)"
		if cfg.RegistryUsername != "" {
			who = fmt.Sprintf("SWARM_LEASE_DEPLOY_REGISTRY_USERNAME (from %s) and SWARM_LEASE_DEPLOY_REGISTRY_TOKEN (from %s)", cfg.Source("registry_username"), cfg.Source("registry_token"))
		}
		return fmt.Errorf("the registry %s refused the credentials: check %s: %w", cfg.Registry, who, err)
	}
	return fmt.Errorf("the registry %s (SWARM_LEASE_DEPLOY_REGISTRY, from %s): %w", cfg.Registry, cfg.Source("registry"), err)
}

// defaultTag names a build after its commit and time, so that every deploy pushes a tag of
// its own and never moves one that a running stack was deployed from.
func defaultTag(opts *Options) string {
	tag := "deploy-" + opts.Now().UTC().Format("20060102t150405z")
	if c := opts.commitHash; len(c) >= 12 {
		tag += "-" + c[:12]
	}
	return tag
}

// pushImages builds and pushes the images planned.
func pushImages(ctx context.Context, opts *Options, cfg *config.Config, p *imagePlan) error {
	b := images.Build{Root: opts.Dir, Version: "dev", Commit: opts.commitHash, Date: opts.Now().UTC().Format("2006-01-02T15:04:05Z"), Platforms: p.platforms, Env: childenv.Environ()}
	pub, err := opts.Publish(ctx, b, p.target)
	if err != nil {
		return imageError(cfg, err)
	}
	p.published = pub
	return nil
}
