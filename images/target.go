package images

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ErrNotPublished is a tag that the registry does not have.
var ErrNotPublished = errors.New("images: not published")

// ErrReference is a registry, namespace or tag that make no valid image reference: a mistake
// in the target, not an answer of the registry.
var ErrReference = errors.New("images: invalid image reference")

// Target is where the images are: ControllerName:Tag and ControllerName-demo:Tag under
// Registry.
type Target struct {
	// Registry is HOST[:PORT][/path], e.g. docker.io/example or 127.0.0.1:5000. Loopback
	// registries (127.0.0.0/8, ::1, localhost) are spoken to over plain HTTP only, as Docker
	// does; every other one over HTTPS.
	Registry string
	// Tag is the images' tag.
	Tag string
	// Keychain gives the registry's credentials (default: the machine's Docker credentials,
	// authn.DefaultKeychain). Credentials stay in memory: nothing runs the docker CLI.
	Keychain authn.Keychain
}

func (t Target) keychain() authn.Keychain {
	if t.Keychain == nil {
		return authn.DefaultKeychain
	}
	return t.Keychain
}

// tags are the controller's and the demo image's references.
func (t Target) tags() (controller, demo name.Tag, err error) {
	if controller, err = name.NewTag(t.Registry + "/" + ControllerName + ":" + t.Tag); err != nil {
		return name.Tag{}, name.Tag{}, fmt.Errorf("%w %s/%s:%s: %w", ErrReference, t.Registry, ControllerName, t.Tag, err)
	}
	if demo, err = name.NewTag(t.Registry + "/" + ControllerName + "-demo:" + t.Tag); err != nil {
		return name.Tag{}, name.Tag{}, fmt.Errorf("%w %s/%s-demo:%s: %w", ErrReference, t.Registry, ControllerName, t.Tag, err)
	}
	return controller, demo, nil
}

// Resolve reads the digests of both images of t from the registry, changing nothing. A tag
// the registry does not have is an error matching ErrNotPublished.
func Resolve(ctx context.Context, t Target) (Published, error) {
	controller, demo, err := t.tags()
	if err != nil {
		return Published{}, err
	}
	var out Published
	if out.Controller, err = resolve(ctx, controller, t.keychain()); err != nil {
		return Published{}, err
	}
	if out.Demo, err = resolve(ctx, demo, t.keychain()); err != nil {
		return Published{}, err
	}
	return out, nil
}

// resolve is tag's repository@digest, from a HEAD request.
func resolve(ctx context.Context, tag name.Tag, keychain authn.Keychain) (string, error) {
	desc, err := remote.Head(tag, remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain), loopbackTransport())
	if err != nil {
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			return "", fmt.Errorf("%w: %s is not in the registry: publish it first, or give a tag that exists", ErrNotPublished, tag)
		}
		return "", fmt.Errorf("images: read %s: %w", tag, err)
	}
	return tag.Context().Name() + "@" + desc.Digest.String(), nil
}
