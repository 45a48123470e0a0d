package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/regbo/lfp-swarm-lease/images"
)

// Up are the results of Deploy.
type Up struct {
	// URL is the demo page.
	URL string `json:"url"`
	// Stack is the stack's name.
	Stack string `json:"stack"`
	// Images are the pushed images, by digest.
	Images images.Published `json:"images"`
}

// Deploy checks that DOCKER_HOST is a Swarm manager (CheckManager), builds the images for b's platforms, pushes them to a registry served on loopback by
// this process for as long as the deployment takes (Swarm pins each service to the digest and
// keeps the pulled image, so the registry is not needed afterwards), deploys the stack and
// waits until the page answers and the controllers have elected a leader.
func Deploy(ctx context.Context, o Options, b images.Build, progress io.Writer) (Up, error) {
	sock, err := socketPath()
	if err != nil {
		return Up{}, err
	}
	if err := CheckManager(ctx); err != nil {
		return Up{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Up{}, fmt.Errorf("a loopback registry: %w", err)
	}
	reg := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go reg.Serve(ln)
	defer reg.Close()

	fmt.Fprintf(progress, "building and pushing the images to %s\n", ln.Addr())
	b.Root = o.Root
	pub, err := images.Publish(ctx, b, ln.Addr().String(), "local")
	if err != nil {
		return Up{}, err
	}
	env := append([]string{
		"DEMO_IMAGE=" + pub.Demo,
		"DEMO_PORT=" + strconv.Itoa(o.Port),
		"DOCKER_SOCKET=" + sock,
		// Images from a loopback registry run on this node only, and not every kernel has the
		// IPVS that virtual IPs and the routing mesh need: DNS round robin and a host port
		// work everywhere.
		"ENDPOINT_MODE=dnsrr",
		"DEMO_PORT_MODE=host",
	}, o.Env...)
	fmt.Fprintf(progress, "deploying stack %s (%s)\n", o.Name, pub.Demo)
	if _, err := docker(ctx, env, "stack", "deploy", "--resolve-image", "always", "-c", filepath.Join(o.Root, "deploy", "stack.yml"), o.Name); err != nil {
		return Up{}, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", o.Port)
	if err := waitForLeader(ctx, url); err != nil {
		return Up{}, fmt.Errorf("stack %s: %w", o.Name, err)
	}
	return Up{URL: url, Stack: o.Name, Images: pub}, nil
}

// waitForLeader polls the page's /v1/state (through the demo service's proxy) until it names a
// holder.
func waitForLeader(ctx context.Context, url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	var last string
	for {
		resp, err := client.Get(url + "/v1/state")
		if err == nil {
			var s struct {
				HolderID string `json:"holder_id"`
			}
			json.NewDecoder(resp.Body).Decode(&s)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && s.HolderID != "" {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no leader on %s/v1/state before the deadline (last: %s)", url, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
