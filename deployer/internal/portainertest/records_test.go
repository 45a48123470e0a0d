package portainertest

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Every 2xx answer carries a CSRF token in X-Csrf-Token, as gorilla/csrf's do; errors do not.
func TestSuccessfulAnswersCarryACSRFToken(t *testing.T) {
	fake := Start(t, Options{APIKeys: []string{testKey}})
	if got := send(t, http.MethodGet, fake.URL()+"/api/system/status", nil, nil); got.status != http.StatusOK || len(got.header.Get("X-Csrf-Token")) < 32 {
		t.Errorf("status: %d with X-Csrf-Token %q, want 200 with a token", got.status, got.header.Get("X-Csrf-Token"))
	}
	if got := send(t, http.MethodGet, fake.URL()+"/api/stacks/7", keyed(), nil); got.status != http.StatusNotFound || got.header.Get("X-Csrf-Token") != "" {
		t.Errorf("missing stack: %d with X-Csrf-Token %q, want 404 without", got.status, got.header.Get("X-Csrf-Token"))
	}
}

// seeded is a fake without an engine holding the record of stack "taken" on endpoint 2 (of
// two environments on one Swarm).
func seeded(t *testing.T, o Options) *Server {
	o.APIKeys = []string{testKey}
	o.Endpoints = []Endpoint{{ID: 1, Name: "local", Type: 1}, {ID: 2, Name: "other", Type: 1}}
	o.Stacks = []Stack{{ID: 3, Name: "taken", Type: stackTypeSwarm, SwarmID: "swarm", EndpointID: 2, StackFileContent: idleFile}}
	return Start(t, o)
}

// A stack's name is taken by a record of the same endpoint only: another endpoint's record
// does not count (Portainer then asks the engine, which has that stack's services), and the
// 409's details repeat its message.
func TestNameUniquenessCountsTheSameEndpointOnly(t *testing.T) {
	fake := seeded(t, Options{})
	body := map[string]any{"Name": "taken", "SwarmID": "swarm", "StackFileContent": idleFile}
	got := send(t, http.MethodPost, fake.URL()+"/api/stacks/create/swarm/string?endpointId=2", keyed(), body)
	msg := "A stack with the normalized name 'taken' already exists"
	if got.status != http.StatusConflict || !strings.Contains(got.body, `{"message":"`+msg+`","details":"`+msg+`"}`) {
		t.Errorf("create on the record's endpoint: %d %s, want 409 with the message as details", got.status, got.body)
	}
	got = send(t, http.MethodPost, fake.URL()+"/api/stacks/create/swarm/string?endpointId=1", keyed(), body)
	if got.status != http.StatusInternalServerError || !strings.Contains(got.body, "Unable to check for name collision") {
		t.Errorf("create on another endpoint: %d %s, want the engine asked (500 without one)", got.status, got.body)
	}
}

// A stack answers with the fields Portainer 2.23 sends besides the ones the client reads.
func TestStackAnswersCarryPortainersFields(t *testing.T) {
	fake := seeded(t, Options{})
	got := send(t, http.MethodGet, fake.URL()+"/api/stacks/3", keyed(), nil)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got.body), &fields); err != nil {
		t.Fatalf("GET /api/stacks/3: %d %s", got.status, got.body)
	}
	for _, name := range []string{"Id", "Name", "Type", "EndpointId", "SwarmId", "EntryPoint", "Env", "ResourceControl", "Status", "ProjectPath",
		"CreationDate", "CreatedBy", "UpdateDate", "UpdatedBy", "AdditionalFiles", "AutoUpdate", "Option", "GitConfig", "FromAppTemplate",
		"Namespace", "IsComposeFormat", "SupportRelativePath", "FilesystemPath", "StackFileVersion", "PreviousDeploymentInfo"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("the stack lacks %s: %s", name, got.body)
		}
	}
	if rc := string(fields["ResourceControl"]); !strings.Contains(rc, `"ResourceId":"2_taken"`) || !strings.Contains(rc, `"AdministratorsOnly":true`) {
		t.Errorf("ResourceControl = %s, want the administrators-only control of 2_taken", rc)
	}
}

// A delete without endpointId reads the stack first, then finds no endpoint 0: for an
// administrator the stack is orphaned, and only its record goes — no `docker stack rm` runs
// (this fake has no engine: running it would answer 500).
func TestDeleteWithoutEndpointIDDeletesTheRecordOnly(t *testing.T) {
	fake := seeded(t, Options{})
	if got := send(t, http.MethodDelete, fake.URL()+"/api/stacks/3", keyed(), nil); got.status != http.StatusNoContent {
		t.Fatalf("delete without endpointId: %d %s, want 204", got.status, got.body)
	}
	if recs := fake.Stacks(); len(recs) != 0 {
		t.Errorf("records after the delete: %+v", recs)
	}
}

// requireDockerCLI skips a test that runs the docker CLI (never a daemon) where it is missing,
// and fails it under CI=true.
func requireDockerCLI(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the docker CLI is missing and CI=true: %v", err)
		}
		t.Skipf("the docker CLI is missing: %v", err)
	}
}

// An update runs the real docker CLI against an engine that is not there, which fails after the
// CLI read the file: the file's variables come from Portainer's own environment plus the
// stack's Env, and the failure answers the CLI's stderr — with its newline — as the message and
// the same text capitalised as the details.
func TestDeployGetsPortainersEnvironmentAndFailsWithTheCLIsStderr(t *testing.T) {
	requireDockerCLI(t)
	environ := append(os.Environ(), "FROM_PORTAINER=portainer")
	fake := seeded(t, Options{DockerHost: "unix:///nonexistent/docker.sock", Environment: environ})
	file := "version: \"3.8\"\nservices:\n  x:\n    image: \"127.0.0.1:1/none:${FROM_PORTAINER:?unset in Portainer's environment}-${FROM_ENV:?unset in Env}\"\n"
	got := send(t, http.MethodPut, fake.URL()+"/api/stacks/3?endpointId=2", keyed(), map[string]any{
		"StackFileContent": file, "Env": []EnvVar{{Name: "FROM_ENV", Value: "env"}}})
	var answer struct{ Message, Details string }
	if err := json.Unmarshal([]byte(got.body), &answer); err != nil || got.status != http.StatusInternalServerError {
		t.Fatalf("update against no engine: %d %s, want 500", got.status, got.body)
	}
	if strings.Contains(answer.Message, "unset in") || !strings.Contains(answer.Message, "Cannot connect to the Docker daemon") {
		t.Errorf("message %q, want the CLI past the file's variables, failing to reach the engine", answer.Message)
	}
	if !strings.HasSuffix(answer.Message, "\n") || answer.Details != strings.ToUpper(answer.Message[:1])+answer.Message[1:] {
		t.Errorf("message %q, details %q: want the CLI's stderr with its newline, and the same capitalised", answer.Message, answer.Details)
	}
	if rec := fake.Stacks()[0]; rec.StackFileContent != idleFile {
		t.Errorf("a failed update changed the record: %+v", rec)
	}
}

// An update with PullImage false deploys with --resolve-image=never; a create always pulls.
func TestPullImageFalseResolvesNoImage(t *testing.T) {
	if args := deployArgs("f.yml", "s", true, false); !slices.Contains(args, "--resolve-image=never") || !slices.Contains(args, "--prune") {
		t.Errorf("no pull, prune: %v", args)
	}
	if args := deployArgs("f.yml", "s", false, true); slices.Contains(args, "--resolve-image=never") || slices.Contains(args, "--prune") ||
		!slices.Equal(args[:3], []string{"stack", "deploy", "--with-registry-auth"}) {
		t.Errorf("pull, no prune: %v", args)
	}
}
