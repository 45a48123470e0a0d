package watchcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// describeState prints one state of an election as one line.
func describeState(w io.Writer, s swarmlease.State) error {
	var err error
	switch {
	case !s.Exists:
		_, err = fmt.Fprintf(w, "%s: the election does not exist\n", s.Namespace)
	case s.Acquired:
		_, err = fmt.Fprintf(w, "%s: held by %s (node %s, task %s), fence %d, since %s, expires %s\n",
			s.Namespace, s.HolderID, cmdutil.Dash(s.NodeID), cmdutil.Dash(s.TaskID), s.Fence, formatTimePtr(s.AcquiredAt), formatTimePtr(s.ExpiresAt))
	case s.HolderID != "":
		_, err = fmt.Fprintf(w, "%s: no holder: the lease of %s expired at %s, fence %d\n",
			s.Namespace, s.HolderID, formatTimePtr(s.ExpiresAt), s.Fence)
	default:
		_, err = fmt.Fprintf(w, "%s: no holder, fence %d\n", s.Namespace, s.Fence)
	}
	return err
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return cmdutil.FormatTime(*t)
}

// RoomJSON is a room's state as the CLI prints it: the elections API's field names.
type RoomJSON struct {
	ElectionID   string             `json:"election_id"`
	Status       string             `json:"status"`
	Leader       *swarmlease.Leader `json:"leader"`
	RetryAfterMs int64              `json:"retry_after_ms"`
	ObservedAt   *time.Time         `json:"observed_at,omitempty"`
}

// ToRoomJSON is s in the CLI's JSON form.
func ToRoomJSON(s swarmlease.RoomState) RoomJSON {
	return RoomJSON{ElectionID: s.ElectionID, Status: string(s.Status), Leader: s.Leader,
		RetryAfterMs: s.RetryAfter.Milliseconds(), ObservedAt: cmdutil.TimePtr(s.ObservedAt)}
}

// DescribeRoom prints one state of a room as one line.
func DescribeRoom(w io.Writer, s swarmlease.RoomState) error {
	if s.Leader == nil {
		_, err := fmt.Fprintf(w, "room %s: vacant\n", s.ElectionID)
		return err
	}
	_, err := fmt.Fprintf(w, "room %s: led by %s, term %d, expires %s\n", s.ElectionID, s.Leader.CandidateID, s.Leader.Term, cmdutil.FormatTime(s.Leader.ExpiresAt))
	return err
}

// watchRoom prints the states of the room at base until ctx ends.
func watchRoom(ctx context.Context, opts *Options, base, room string, log *slog.Logger) error {
	el, err := swarmlease.NewClient(base, opts.clientOptions(log)...)
	if err != nil {
		return cmdutil.Usage(fmt.Errorf("invalid URL %q: %w", opts.URL, err))
	}
	enc := json.NewEncoder(opts.IO.Out)
	for st, err := range el.WatchRoom(ctx, room) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return watchFailed(opts, err)
		}
		if opts.JSON {
			err = enc.Encode(ToRoomJSON(st))
		} else {
			err = DescribeRoom(opts.IO.Out, st)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
