package watchcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdtest"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// TestWatchFailsFastWithoutNamespace: a server without an election namespace answers 404 on
// /v1/*: watch says so at once (exit 2) instead of retrying until the initial timeout.
func TestWatchFailsFastWithoutNamespace(t *testing.T) {
	base := cmdtest.StartElectionsServer(t)
	var out, errBuf bytes.Buffer
	start := time.Now()
	err := watchRun(context.Background(), &Options{IO: cmdutil.IOStreams{Out: &out, Err: &errBuf}, URL: base, InitialTimeout: time.Minute})
	if code, _ := cmdutil.Classify(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "this server serves no election namespace") {
		t.Fatalf("exit %d: %v", code, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %v", took)
	}
}

// TestWatchFollowsARoom: a room URL follows the room: vacant first, then its leader, in the
// elections API's field names.
func TestWatchFollowsARoom(t *testing.T) {
	base := cmdtest.StartElectionsServer(t)
	const room = "nightly-report"
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- watchRun(ctx, &Options{IO: cmdutil.IOStreams{Out: pw, Err: io.Discard}, JSON: true, URL: base + "/elections/" + room, InitialTimeout: 10 * time.Second})
		pw.Close()
	}()
	lines := make(chan RoomJSON)
	go func() {
		dec := json.NewDecoder(pr)
		for {
			var r RoomJSON
			if dec.Decode(&r) != nil {
				close(lines)
				return
			}
			lines <- r
		}
	}()
	next := func(what string) RoomJSON {
		t.Helper()
		select {
		case r, ok := <-lines:
			if !ok {
				t.Fatalf("%s: the watch ended: %v", what, <-done)
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no state", what)
		}
		return RoomJSON{}
	}
	if r := next("snapshot"); r.ElectionID != room || r.Status != "vacant" || r.Leader != nil {
		t.Fatalf("snapshot %+v", r)
	}
	el, err := swarmlease.NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := el.Campaign(ctx, room, swarmlease.CampaignRequest{CandidateID: "worker-a", TTL: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if r := next("campaign"); r.Status != "leader" || r.Leader == nil || r.Leader.CandidateID != "worker-a" || r.Leader.Term == 0 {
		t.Fatalf("after the campaign %+v", r)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("watch ended with %v", err)
	}
}
