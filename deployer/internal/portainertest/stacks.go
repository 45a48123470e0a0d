package portainertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// stackTypeSwarm and stackTypeCompose are Portainer's stack types.
const (
	stackTypeSwarm   = 1
	stackTypeCompose = 2
)

// stackJSON is a stack record as Portainer 2.23 answers it, with the fields a Swarm stack made
// from a string leaves at their zero values (a client must take them, and ignore them).
type stackJSON struct {
	ID                     int              `json:"Id"`
	Name                   string           `json:"Name"`
	Type                   int              `json:"Type"`
	EndpointID             int              `json:"EndpointId"`
	SwarmID                string           `json:"SwarmId"`
	EntryPoint             string           `json:"EntryPoint"`
	Env                    []EnvVar         `json:"Env"`
	ResourceControl        *resourceControl `json:"ResourceControl"`
	Status                 int              `json:"Status"`
	ProjectPath            string           `json:"ProjectPath"`
	CreationDate           int64            `json:"CreationDate"`
	CreatedBy              string           `json:"CreatedBy"`
	UpdateDate             int64            `json:"UpdateDate"`
	UpdatedBy              string           `json:"UpdatedBy"`
	AdditionalFiles        []string         `json:"AdditionalFiles"`
	AutoUpdate             *struct{}        `json:"AutoUpdate"`
	Option                 *struct{}        `json:"Option"`
	GitConfig              *struct{}        `json:"GitConfig"`
	FromAppTemplate        bool             `json:"FromAppTemplate"`
	Namespace              string           `json:"Namespace"`
	IsComposeFormat        bool             `json:"IsComposeFormat"`
	SupportRelativePath    bool             `json:"SupportRelativePath"`
	FilesystemPath         string           `json:"FilesystemPath"`
	StackFileVersion       int              `json:"StackFileVersion"`
	PreviousDeploymentInfo *struct{}        `json:"PreviousDeploymentInfo"`
}

// resourceControl is the access control Portainer gives a stack an administrator created:
// administrators only.
type resourceControl struct {
	ID                 int      `json:"Id"`
	ResourceID         string   `json:"ResourceId"`
	SubResourceIDs     []string `json:"SubResourceIds"`
	Type               int      `json:"Type"`
	UserAccesses       []any    `json:"UserAccesses"`
	TeamAccesses       []any    `json:"TeamAccesses"`
	Public             bool     `json:"Public"`
	AdministratorsOnly bool     `json:"AdministratorsOnly"`
	System             bool     `json:"System"`
}

// stackResourceControl is Portainer's resource control type of a stack.
const stackResourceControl = 6

func toJSON(st *Stack) stackJSON {
	env := st.Env
	if env == nil {
		env = []EnvVar{}
	}
	return stackJSON{
		ID: st.ID, Name: st.Name, Type: st.Type, EndpointID: st.EndpointID, SwarmID: st.SwarmID,
		EntryPoint: "docker-compose.yml", Env: env, Status: 1,
		ResourceControl: &resourceControl{
			ID: st.ID, ResourceID: fmt.Sprintf("%d_%s", st.EndpointID, st.Name), SubResourceIDs: []string{},
			Type: stackResourceControl, UserAccesses: []any{}, TeamAccesses: []any{}, AdministratorsOnly: true,
		},
		ProjectPath:  fmt.Sprintf("/data/compose/%d", st.ID),
		CreationDate: st.CreationDate, CreatedBy: st.CreatedBy, UpdateDate: st.UpdateDate, UpdatedBy: st.UpdatedBy,
		StackFileVersion: 1,
	}
}

// stackNotFound answers Portainer's 404 for a missing stack record.
func stackNotFound(w http.ResponseWriter, id int) {
	writeError(w, http.StatusNotFound, "Unable to find a stack with the specified identifier inside the database", notInDatabase("stacks", id))
}

// listStacks is GET /api/stacks?filters={"SwarmID":…,"EndpointID":…}. As in Portainer, a Swarm
// stack matches on SwarmID alone and a Compose stack on EndpointID alone; no filter lists all.
func (s *Server) listStacks(w http.ResponseWriter, r *http.Request) {
	var filters struct {
		SwarmID    string
		EndpointID int
	}
	if raw := r.URL.Query().Get("filters"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &filters); err != nil {
			writeError(w, http.StatusBadRequest, "Invalid query parameter: filters", err.Error())
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []stackJSON{}
	for _, st := range s.sortedStacksLocked() {
		all := filters.SwarmID == "" && filters.EndpointID == 0
		swarmMatch := st.Type == stackTypeSwarm && st.SwarmID == filters.SwarmID
		composeMatch := st.Type == stackTypeCompose && st.EndpointID == filters.EndpointID
		if all || swarmMatch || composeMatch {
			out = append(out, toJSON(st))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) sortedStacksLocked() []*Stack {
	out := make([]*Stack, 0, len(s.stacks))
	for _, st := range s.stacks {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *Stack) int { return a.ID - b.ID })
	return out
}

// stackOfLocked resolves the {id} route variable, answering 400/404 itself when it cannot.
func (s *Server) stackOfLocked(w http.ResponseWriter, r *http.Request) (*Stack, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "Invalid stack identifier route variable", err.Error())
		return nil, false
	}
	st, ok := s.stacks[id]
	if !ok {
		stackNotFound(w, id)
	}
	return st, ok
}

// getStack is GET /api/stacks/{id}.
func (s *Server) getStack(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stackOfLocked(w, r); ok {
		writeJSON(w, http.StatusOK, toJSON(st))
	}
}

// getStackFile is GET /api/stacks/{id}/file.
func (s *Server) getStackFile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stackOfLocked(w, r); ok {
		writeJSON(w, http.StatusOK, map[string]string{"StackFileContent": st.StackFileContent})
	}
}

// endpointQuery resolves the required endpointId query parameter.
func (s *Server) endpointQuery(w http.ResponseWriter, r *http.Request) (Endpoint, bool) {
	raw := r.URL.Query().Get("endpointId")
	if raw == "" {
		writeError(w, http.StatusBadRequest, "Invalid query parameter: endpointId", missingQueryParameter)
		return Endpoint{}, false
	}
	return s.endpointOf(w, raw, "Invalid query parameter: endpointId")
}

// missingQueryParameter is the details of Portainer's 400 for a required query parameter that
// is missing.
const missingQueryParameter = "Missing query parameter"

// notNameChars are the characters Portainer strips from a stack name after lower-casing it.
var notNameChars = regexp.MustCompile(`[^-_a-z0-9]+`)

func normalizeName(name string) string {
	return notNameChars.ReplaceAllString(strings.ToLower(name), "")
}

// createStackDeprecated is the pre-2.19 POST /api/stacks?type=1&method=string&endpointId=N.
func (s *Server) createStackDeprecated(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("type") != strconv.Itoa(stackTypeSwarm) || q.Get("method") != "string" {
		writeError(w, http.StatusBadRequest, "Invalid query parameter: type or method", "portainertest creates Swarm stacks from a string only (type=1&method=string)")
		return
	}
	s.createStack(w, r)
}

// createStack is POST /api/stacks/create/swarm/string?endpointId=N: validate, refuse a name in
// use (by a record or by services of an external stack), deploy, and record only on success.
func (s *Server) createStack(w http.ResponseWriter, r *http.Request) {
	ep, ok := s.endpointQuery(w, r)
	if !ok {
		return
	}
	var body struct {
		Name             string
		SwarmID          string
		StackFileContent string
		Env              []EnvVar
	}
	if !decodePayload(w, r, &body) {
		return
	}
	name := normalizeName(body.Name)
	switch {
	case name == "":
		invalidPayload(w, "Invalid stack name")
		return
	case body.SwarmID == "":
		invalidPayload(w, "Invalid Swarm ID")
		return
	case body.StackFileContent == "":
		invalidPayload(w, "Invalid stack file content")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock() // held across the deploy: one deploy at a time, as a name check must be
	// Portainer counts the records of this endpoint only, then the engine's stacks and Compose
	// projects of that name (which a record of another endpoint on the same Swarm has).
	for _, st := range s.stacks {
		if st.Name == name && st.EndpointID == ep.ID {
			nameTaken(w, name)
			return
		}
	}
	taken, err := s.engine.nameInUse(r.Context(), name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Unable to check for name collision", err.Error())
		return
	}
	if taken {
		nameTaken(w, name)
		return
	}
	// A create always pulls: Portainer deploys it with PullImage true.
	if stderr, err := s.engine.stackDeploy(s.dir, name, body.StackFileContent, body.Env, false, true); err != nil {
		deployFailed(w, stderr, err)
		return
	}
	s.created[name] = true
	st := &Stack{
		ID: s.nextID, Name: name, Type: stackTypeSwarm, SwarmID: body.SwarmID, EndpointID: ep.ID,
		Env: body.Env, StackFileContent: body.StackFileContent,
		CreatedBy: userOf(r), CreationDate: s.now().Unix(),
	}
	s.nextID++
	s.stacks[st.ID] = st
	writeJSON(w, http.StatusOK, toJSON(st))
}

// deployFailed answers a deploy the docker CLI refused as Portainer does: 500, the CLI's
// stderr as it is (ending in its newline) as the message, and the same text with a capital
// first letter as the details. Without any stderr, the error itself.
func deployFailed(w http.ResponseWriter, stderr string, err error) {
	if stderr == "" {
		stderr = err.Error()
	}
	details := stderr
	if first, size := utf8.DecodeRuneInString(stderr); first != utf8.RuneError {
		details = string(unicode.ToUpper(first)) + stderr[size:]
	}
	writeError(w, http.StatusInternalServerError, stderr, details)
}

// nameTaken is Portainer's 409 for a name in use: the details repeat the message.
func nameTaken(w http.ResponseWriter, name string) {
	msg := fmt.Sprintf("A stack with the normalized name '%s' already exists", name)
	writeError(w, http.StatusConflict, msg, msg)
}

// updateStack is PUT /api/stacks/{id}?endpointId=N: redeploy with the new file and Env (which
// replaces the stored one), re-associate with the endpoint; on a failed deploy nothing changes.
func (s *Server) updateStack(w http.ResponseWriter, r *http.Request) {
	ep, ok := s.endpointQuery(w, r)
	if !ok {
		return
	}
	var body struct {
		StackFileContent string
		Env              []EnvVar
		Prune            bool
		PullImage        bool
	}
	if !decodePayload(w, r, &body) {
		return
	}
	if body.StackFileContent == "" {
		invalidPayload(w, "Invalid stack file content")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.stackOfLocked(w, r)
	if !ok {
		return
	}
	if stderr, err := s.engine.stackDeploy(s.dir, st.Name, body.StackFileContent, body.Env, body.Prune, body.PullImage); err != nil {
		deployFailed(w, stderr, err)
		return
	}
	st.StackFileContent = body.StackFileContent
	st.Env = body.Env
	st.EndpointID = ep.ID
	st.UpdatedBy = userOf(r)
	st.UpdateDate = s.now().Unix()
	writeJSON(w, http.StatusOK, toJSON(st))
}

// deleteStack is DELETE /api/stacks/{id}[?endpointId=N]. As in Portainer, the record is read
// first (404 when missing), then the endpoint: endpointId is optional, and one that is not the
// stack's own (0 when it is missing) makes the stack "orphaned" for an administrator: when no
// such endpoint exists, the record alone is deleted — `docker stack rm` does not run and the
// services stay. Otherwise `docker stack rm` runs, then the record goes.
func (s *Server) deleteStack(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.stackOfLocked(w, r)
	if !ok {
		return
	}
	endpointID := 0
	if raw := r.URL.Query().Get("endpointId"); raw != "" {
		id, err := strconv.Atoi(raw)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Invalid query parameter: endpointId", err.Error())
			return
		}
		endpointID = id
	}
	if _, ok := s.endpoint(endpointID); !ok {
		if endpointID == st.EndpointID {
			writeError(w, http.StatusNotFound, "Unable to find the endpoint associated to the stack inside the database", notInDatabase("endpoints", endpointID))
			return
		}
		delete(s.stacks, st.ID) // orphaned: the record goes, the services stay
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if stderr, err := s.engine.stackRemove(st.Name); err != nil {
		deployFailed(w, stderr, err)
		return
	}
	delete(s.stacks, st.ID)
	w.WriteHeader(http.StatusNoContent)
}
