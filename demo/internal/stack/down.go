package stack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// Removed is what Remove removed.
type Removed struct {
	// Services and Networks are the stack's, as `docker stack rm` removed them.
	Services []string `json:"services"`
	Networks []string `json:"networks"`
	// Volumes are the stack's volumes (the ledger's).
	Volumes []string `json:"volumes"`
	// Anchor is the lease's anchor service, if there was one.
	Anchor string `json:"anchor,omitempty"`
}

// String says what was removed, one line per kind, or that there was nothing to remove.
func (r Removed) String() string {
	var lines []string
	add := func(what string, names []string) {
		if len(names) > 0 {
			lines = append(lines, fmt.Sprintf("removed %s %s", what, strings.Join(names, ", ")))
		}
	}
	add("services", r.Services)
	add("networks", r.Networks)
	add("volumes", r.Volumes)
	if r.Anchor != "" {
		lines = append(lines, "removed the lease's anchor service "+r.Anchor)
	}
	return strings.Join(lines, "\n")
}

// Empty reports whether nothing was removed.
func (r Removed) Empty() bool {
	return len(r.Services)+len(r.Networks)+len(r.Volumes) == 0 && r.Anchor == ""
}

// Remove removes the stack, the controllers' lease anchor (a service the lease created, not
// part of the stack) and, once their containers are gone, the stack's volumes: nothing else.
// It checks first that DOCKER_HOST is a Swarm manager (CheckManager).
func Remove(ctx context.Context, name string) (Removed, error) {
	var r Removed
	if err := CheckManager(ctx); err != nil {
		return r, err
	}
	label := "label=com.docker.stack.namespace=" + name
	out, err := docker(ctx, nil, "stack", "rm", name)
	if err != nil && !strings.Contains(err.Error(), "Nothing found in stack") {
		return r, err
	}
	for _, line := range strings.Split(out, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "Removing service "); ok {
			r.Services = append(r.Services, s)
		} else if n, ok := strings.CutPrefix(strings.TrimSpace(line), "Removing network "); ok {
			r.Networks = append(r.Networks, n)
		}
	}
	// Volumes can go only when the containers using them have stopped and been removed, and
	// the anchor only when no controller is left to write it again (a stopping one releases).
	for {
		containers, err := docker(ctx, nil, "ps", "-aq", "--filter", label)
		if err != nil {
			return r, err
		}
		volumes, err := docker(ctx, nil, "volume", "ls", "-q", "--filter", label)
		if err != nil {
			return r, err
		}
		if strings.TrimSpace(containers) == "" {
			for _, v := range strings.Fields(volumes) {
				if _, err := docker(ctx, nil, "volume", "rm", v); err != nil {
					return r, err
				}
				r.Volumes = append(r.Volumes, v)
			}
			anchor := swarmstore.AnchorName(name + "_controller")
			removed, err := removeAnchor(ctx, anchor)
			if removed {
				r.Anchor = anchor
			}
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("stack %s: its containers were not gone before the deadline: %s", name, strings.Fields(containers))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// removeAnchor removes the lease's anchor service if it exists, and reports whether it did.
func removeAnchor(ctx context.Context, anchor string) (bool, error) {
	out, err := docker(ctx, nil, "service", "ls", "-q", "--filter", "name="+anchor)
	if err != nil || strings.TrimSpace(out) == "" {
		return false, err
	}
	if _, err = docker(ctx, nil, "service", "rm", anchor); err != nil {
		return false, err
	}
	return true, nil
}
