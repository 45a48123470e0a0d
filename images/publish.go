package images

import (
	"context"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Published are the pushed images, each as repository@digest (a reference Swarm pins).
type Published struct {
	// Controller is the controller image's index.
	Controller string `json:"controller"`
	// Demo is the demo image's index.
	Demo string `json:"demo"`
}

// Publish builds both images for b's platforms and pushes them to registry (HOST[:PORT][/path])
// as ControllerName:tag and ControllerName-demo:tag, with the machine's Docker credentials.
// Loopback registries (127.0.0.0/8, ::1, localhost) are spoken to over plain HTTP only, as
// Docker does.
func Publish(ctx context.Context, b Build, registry, tag string) (Published, error) {
	return PublishTo(ctx, b, Target{Registry: registry, Tag: tag})
}

// PublishTo is Publish to t, with t's credentials.
func PublishTo(ctx context.Context, b Build, t Target) (Published, error) {
	// The references first: a bad tag is found before minutes of building.
	controllerRef, demoRef, err := t.tags()
	if err != nil {
		return Published{}, err
	}
	if b, err = b.withDefaults(); err != nil {
		return Published{}, err
	}
	if b.WorkDir == "" {
		if b.WorkDir, err = os.MkdirTemp("", "lfp-swarm-lease-images-"); err != nil {
			return Published{}, fmt.Errorf("images: a directory for the binaries: %w", err)
		}
		defer os.RemoveAll(b.WorkDir)
	}
	controllers, err := b.platformImages(ctx, ControllerPackage, ControllerName, func(v1.Platform) (v1.Image, error) { return empty.Image, nil })
	if err != nil {
		return Published{}, fmt.Errorf("%w: %w", ErrBuild, err)
	}
	demos, err := b.platformImages(ctx, DemoPackage, DemoName, func(p v1.Platform) (v1.Image, error) {
		for i, q := range b.Platforms {
			if q.Equals(p) {
				return controllers[i], nil
			}
		}
		return nil, fmt.Errorf("images: no controller image for %s/%s", p.OS, p.Architecture)
	})
	if err != nil {
		return Published{}, fmt.Errorf("%w: %w", ErrBuild, err)
	}
	var out Published
	if out.Controller, err = push(ctx, b.index(controllers), controllerRef, t.keychain()); err != nil {
		return Published{}, err
	}
	if out.Demo, err = push(ctx, b.index(demos), demoRef, t.keychain()); err != nil {
		return Published{}, err
	}
	return out, nil
}

// push writes idx under tag and returns repository@digest.
func push(ctx context.Context, idx v1.ImageIndex, tag name.Tag, keychain authn.Keychain) (string, error) {
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain), loopbackTransport()); err != nil {
		return "", fmt.Errorf("images: push %s: %w", tag, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return tag.Context().Name() + "@" + digest.String(), nil
}
