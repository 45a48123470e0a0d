package portainer

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Status is GET /api/system/status: the server's version and instance.
type Status struct {
	// Version is Portainer's version, e.g. "2.23.0".
	Version string `json:"Version"`
	// InstanceID identifies the Portainer installation.
	InstanceID string `json:"InstanceID"`
}

// EndpointTypeDocker is the Type of a Docker engine reached through its socket or API (2 is the
// Portainer agent, 4 an edge agent; Portainer calls endpoints "environments").
const EndpointTypeDocker = 1

// Endpoint is one Portainer environment.
type Endpoint struct {
	// ID is the environment's identifier, the endpointId of the stack calls.
	ID int `json:"Id"`
	// Name is the environment's unique display name.
	Name string `json:"Name"`
	// Type is EndpointTypeDocker for an engine reached through its socket or API.
	Type int `json:"Type"`
}

// StackTypeSwarm is the Type of a Swarm stack record (2 is a Compose stack, 3 Kubernetes).
const StackTypeSwarm = 1

// Stack is a stack record in Portainer's database.
type Stack struct {
	// ID is the stack's identifier.
	ID int `json:"Id"`
	// Name is the normalised stack name (lower-case, [-_a-z0-9] only), the Docker stack
	// namespace.
	Name string `json:"Name"`
	// Type is StackTypeSwarm for a Swarm stack.
	Type int `json:"Type"`
	// SwarmID is the cluster ID of the Swarm the stack was deployed to.
	SwarmID string `json:"SwarmId"`
	// EndpointID is the environment the stack belongs to.
	EndpointID int `json:"EndpointId"`
	// EntryPoint is the stack file's name inside Portainer's project directory.
	EntryPoint string `json:"EntryPoint,omitempty"`
	// Env is the stack's environment, substituted into the stack file on deploy.
	Env []EnvVar `json:"Env"`
	// Status is 1 (active) or 2 (inactive).
	Status int `json:"Status,omitempty"`
	// CreationDate and UpdateDate are Unix seconds.
	CreationDate int64 `json:"CreationDate,omitempty"`
	// UpdateDate is the last update's time in Unix seconds (0: never updated).
	UpdateDate int64 `json:"UpdateDate,omitempty"`
	// CreatedBy and UpdatedBy are user names.
	CreatedBy string `json:"CreatedBy,omitempty"`
	// UpdatedBy is the user who last updated the stack.
	UpdatedBy string `json:"UpdatedBy,omitempty"`
}

// EnvVar is one variable of a stack's environment. Portainer passes the set as the process
// environment of `docker stack deploy`, so ${NAME} in the stack file becomes Value.
type EnvVar struct {
	// Name is the variable's name.
	Name string `json:"name"`
	// Value is its value.
	Value string `json:"value"`
	// Secret marks a value that must never appear in an error or a log line: the client
	// redacts it from every error of the call it is sent with, and fmt, encoding/json and
	// log/slog print it redacted (the client sends the real value through its own wire type).
	// Stacks the client returns carry the marks of the request they answer.
	Secret bool `json:"-"`
}

// shownValue is the value as output may show it.
func (v EnvVar) shownValue() string {
	if v.Secret {
		return Secret(v.Value).String()
	}
	return v.Value
}

// LogValue records the variable for log/slog, with a secret value redacted.
func (v EnvVar) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", v.Name), slog.String("value", v.shownValue()))
}

// String prints NAME=value, a secret value redacted.
func (v EnvVar) String() string { return v.Name + "=" + v.shownValue() }

// Format prints the variable as String does for every verb, so that a request printed with
// %v or %+v shows no secret.
func (v EnvVar) Format(f fmt.State, _ rune) { fmt.Fprint(f, v.String()) }

// MarshalJSON encodes {"name","value"} with a secret value redacted, so that a request logged
// as JSON shows no secret.
func (v EnvVar) MarshalJSON() ([]byte, error) {
	return json.Marshal(wireEnvVar{Name: v.Name, Value: v.shownValue()})
}

// wireEnvVar is an EnvVar as sent to Portainer: the real value.
type wireEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// wireEnv is env as sent to Portainer, always a list (never null): Env is replaced whole.
func wireEnv(env []EnvVar) []wireEnvVar {
	out := make([]wireEnvVar, 0, len(env))
	for _, v := range env {
		out = append(out, wireEnvVar{Name: v.Name, Value: v.Value})
	}
	return out
}

// markSecret copies the request's Secret marks onto the answer's variables of the same name.
func markSecret(answer, request []EnvVar) {
	for i := range answer {
		for _, r := range request {
			if r.Secret && r.Name == answer[i].Name {
				answer[i].Secret = true
			}
		}
	}
}

var (
	_ slog.LogValuer = EnvVar{}
	_ fmt.Formatter  = EnvVar{}
	_ json.Marshaler = EnvVar{}
)

// CreateStackRequest is the body of a Swarm stack creation.
type CreateStackRequest struct {
	// Name is the stack's name; Portainer normalises it (lower-case, [-_a-z0-9] only).
	Name string `json:"Name"`
	// SwarmID is the target Swarm's cluster ID (see Client.SwarmID).
	SwarmID string `json:"SwarmID"`
	// StackFileContent is the stack (Compose) file.
	StackFileContent string `json:"StackFileContent"`
	// Env is the stack's whole environment.
	Env []EnvVar `json:"Env"`
}

// UpdateStackRequest is the body of a stack update.
type UpdateStackRequest struct {
	// StackFileContent is the new stack file (required).
	StackFileContent string `json:"StackFileContent"`
	// Env replaces the stored environment as a whole: always send the full set, since a
	// variable left out is removed.
	Env []EnvVar `json:"Env"`
	// Prune removes services no longer in the stack file.
	Prune bool `json:"Prune"`
	// PullImage makes Portainer pull the images again.
	PullImage bool `json:"PullImage"`
}

// Owned reports whether s is a stack that Portainer manages for this Swarm and endpoint: a
// Swarm stack record whose SwarmId and EndpointId both match. Portainer lists Swarm stacks by
// SwarmId alone, so a record of another endpoint on the same Swarm shows up too and is not
// ours; services without any record are an external stack and are never ours either.
func Owned(s Stack, swarmID string, endpointID int) bool {
	return s.Type == StackTypeSwarm && s.SwarmID == swarmID && s.EndpointID == endpointID
}
