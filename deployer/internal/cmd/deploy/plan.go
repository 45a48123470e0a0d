package deploy

import (
	"fmt"
	"io"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/ownership"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/images"
)

// plan is what a deploy does, as the reads found it.
type plan struct {
	portainer portainer.Status
	url       string
	found     ownership.Finding
	name      string
	images    imagePlan
	env       []portainer.EnvVar
}

// print writes the plan: where, create or update, the images and the stack's variables.
func (p plan) print(w io.Writer) {
	ep := p.found.Endpoint
	fmt.Fprintf(w, "Portainer %s at %s\nendpoint %s (id %d), Swarm %s\n", p.portainer.Version, p.url, ep.Name, ep.ID, p.found.SwarmID)
	if p.found.Stack == nil {
		fmt.Fprintf(w, "stack %s: create\n", p.name)
	} else {
		fmt.Fprintf(w, "stack %s: update Portainer stack %d\n", p.name, p.found.Stack.ID)
	}
	t := p.images.target
	if p.images.platforms == nil {
		fmt.Fprintf(w, "images: published tag %s\n  %s\n  %s\n", t.Tag, p.images.published.Controller, p.images.published.Demo)
	} else {
		fmt.Fprintf(w, "images: build %s and push as tag %s\n  %s/%s:%s\n  %s/%s-demo:%s\n", platformNames(p.images.platforms), t.Tag,
			t.Registry, images.ControllerName, t.Tag, t.Registry, images.ControllerName, t.Tag)
	}
	fmt.Fprintln(w, "stack variables:")
	for _, v := range p.env {
		value := v.Value
		if v.Name == "DEMO_IMAGE" && p.images.platforms != nil {
			value = "(the pushed demo image's digest)"
		}
		fmt.Fprintf(w, "  %s=%s\n", v.Name, value)
	}
}
