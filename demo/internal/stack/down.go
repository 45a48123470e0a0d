package stack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// Remove removes the stack, the controllers' lease anchor (a service the lease created, not
// part of the stack) and, once their containers are gone, the stack's volumes: nothing else.
func Remove(ctx context.Context, name string) error {
	label := "label=com.docker.stack.namespace=" + name
	if _, err := docker(ctx, nil, "stack", "rm", name); err != nil && !strings.Contains(err.Error(), "Nothing found in stack") {
		return err
	}
	// Volumes can go only when the containers using them have stopped and been removed, and
	// the anchor only when no controller is left to write it again (a stopping one releases).
	for {
		containers, err := docker(ctx, nil, "ps", "-aq", "--filter", label)
		if err != nil {
			return err
		}
		volumes, err := docker(ctx, nil, "volume", "ls", "-q", "--filter", label)
		if err != nil {
			return err
		}
		if strings.TrimSpace(containers) == "" {
			for _, v := range strings.Fields(volumes) {
				if _, err := docker(ctx, nil, "volume", "rm", v); err != nil {
					return err
				}
			}
			return removeAnchor(ctx, swarmstore.AnchorName(name+"_controller"))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stack %s: its containers were not gone before the deadline: %s", name, strings.Fields(containers))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// removeAnchor removes the lease's anchor service if it exists.
func removeAnchor(ctx context.Context, anchor string) error {
	out, err := docker(ctx, nil, "service", "ls", "-q", "--filter", "name="+anchor)
	if err != nil || strings.TrimSpace(out) == "" {
		return err
	}
	_, err = docker(ctx, nil, "service", "rm", anchor)
	return err
}
