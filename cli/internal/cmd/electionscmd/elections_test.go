package electionscmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/cli/internal/cmd/watchcmd"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdtest"
	"github.com/regbo/lfp-swarm-lease/cli/internal/cmdutil"
	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// TestCreateAndStatus: create prints a new room id; status shows it vacant, then led, in the
// elections API's field names; an invalid room id is a usage error.
func TestCreateAndStatus(t *testing.T) {
	base := cmdtest.StartElectionsServer(t)
	ctx := context.Background()
	opts := func(room string, json bool) (*Options, *bytes.Buffer) {
		var out bytes.Buffer
		return &Options{IO: cmdutil.IOStreams{Out: &out, Err: &bytes.Buffer{}}, JSON: json, Server: base, Timeout: 10 * time.Second, Room: room}, &out
	}
	o, out := opts("", false)
	if err := createRun(ctx, o); err != nil {
		t.Fatal(err)
	}
	room := strings.TrimSpace(out.String())
	if len(room) != 32 {
		t.Fatalf("room id %q", room)
	}
	o, out = opts(room, false)
	if err := statusRun(ctx, o); err != nil || out.String() != "room "+room+": vacant\n" {
		t.Fatalf("status: %q, %v", out.String(), err)
	}
	el, err := swarmlease.NewClient(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := el.Campaign(ctx, room, swarmlease.CampaignRequest{CandidateID: "worker-a"}); err != nil {
		t.Fatal(err)
	}
	o, out = opts(room, true)
	if err := statusRun(ctx, o); err != nil {
		t.Fatal(err)
	}
	var got watchcmd.RoomJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Status != "leader" || got.Leader == nil || got.Leader.CandidateID != "worker-a" || got.ElectionID != room {
		t.Fatalf("status --json: %+v, %v\n%s", got, err, out.String())
	}
	o, _ = opts("bad room", false)
	if err := statusRun(ctx, o); func() int { c, _ := cmdutil.Classify(err); return c }() != cmdutil.ExitUsage {
		t.Fatalf("an invalid room id: %v", err)
	}
}

// TestElectionsNeedsAServer: without --server or <PREFIX>_SERVER the commands say what to set.
func TestElectionsNeedsAServer(t *testing.T) {
	f := &cmdutil.Factory{IOStreams: cmdutil.IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}},
		Environ: func() []string { return []string{"SWARM_LEASE_STORE=memory"} }, Hostname: func() string { return "h" }}
	cmd := NewCmdElections(f, nil)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs([]string{"status", "nightly-report"})
	err := cmd.Execute()
	if code, _ := cmdutil.Classify(err); code != cmdutil.ExitUsage || !strings.Contains(err.Error(), "--server URL or SWARM_LEASE_SERVER") {
		t.Fatalf("exit %d: %v", code, err)
	}
	var gotRoom, gotServer, gotLog string
	cmd = NewCmdElections(f, func(_ context.Context, name string, o *Options) error {
		gotRoom, gotServer, gotLog = name+" "+o.Room, o.Server, o.Log.Format
		return nil
	})
	cmd.SetArgs([]string{"watch", "nightly-report", "--server", "http://elect:8080/", "--log-format", "json"})
	if err := cmd.Execute(); err != nil || gotRoom != "watch nightly-report" || gotServer != "http://elect:8080" || gotLog != "json" {
		t.Fatalf("watch: %v, %q, %q, log format %q", err, gotRoom, gotServer, gotLog)
	}
}
