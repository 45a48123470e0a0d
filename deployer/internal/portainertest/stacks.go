package portainertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// stackTypeSwarm and stackTypeCompose are Portainer's stack types.
const (
	stackTypeSwarm   = 1
	stackTypeCompose = 2
)

// stackJSON is a stack record as Portainer answers it.
type stackJSON struct {
	ID           int      `json:"Id"`
	Name         string   `json:"Name"`
	Type         int      `json:"Type"`
	EndpointID   int      `json:"EndpointId"`
	SwarmID      string   `json:"SwarmId"`
	EntryPoint   string   `json:"EntryPoint"`
	Env          []EnvVar `json:"Env"`
	Status       int      `json:"Status"`
	ProjectPath  string   `json:"ProjectPath"`
	CreationDate int64    `json:"CreationDate"`
	CreatedBy    string   `json:"CreatedBy"`
	UpdateDate   int64    `json:"UpdateDate"`
	UpdatedBy    string   `json:"UpdatedBy"`
}

func toJSON(st *Stack) stackJSON {
	env := st.Env
	if env == nil {
		env = []EnvVar{}
	}
	return stackJSON{
		ID: st.ID, Name: st.Name, Type: st.Type, EndpointID: st.EndpointID, SwarmID: st.SwarmID,
		EntryPoint: "docker-compose.yml", Env: env, Status: 1,
		ProjectPath:  fmt.Sprintf("/data/compose/%d", st.ID),
		CreationDate: st.CreationDate, CreatedBy: st.CreatedBy, UpdateDate: st.UpdateDate, UpdatedBy: st.UpdatedBy,
	}
}

// stackNotFound answers Portainer's 404 for a missing stack record.
func stackNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, "Unable to find a stack with the specified identifier inside the database", "object not found inside the database")
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
		writeError(w, http.StatusBadRequest, "Invalid stack identifier route variable", "Invalid request")
		return nil, false
	}
	st, ok := s.stacks[id]
	if !ok {
		stackNotFound(w)
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
		writeError(w, http.StatusBadRequest, "Invalid query parameter: endpointId", "missing required query parameter endpointId")
		return Endpoint{}, false
	}
	return s.endpointOf(w, raw, "Invalid query parameter: endpointId")
}

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
	for _, st := range s.stacks {
		if st.Name == name {
			nameTaken(w, name)
			return
		}
	}
	external, err := s.engine.stackServices(r.Context(), name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Unable to check the Docker stacks", err.Error())
		return
	}
	if len(external) > 0 {
		nameTaken(w, name)
		return
	}
	if stderr, err := s.engine.stackDeploy(s.dir, name, body.StackFileContent, body.Env, false); err != nil {
		writeError(w, http.StatusInternalServerError, stderr, err.Error())
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

func nameTaken(w http.ResponseWriter, name string) {
	writeError(w, http.StatusConflict, fmt.Sprintf("A stack with the normalized name '%s' already exists", name), "A stack already exists with this name")
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
	if stderr, err := s.engine.stackDeploy(s.dir, st.Name, body.StackFileContent, body.Env, body.Prune); err != nil {
		writeError(w, http.StatusInternalServerError, stderr, err.Error())
		return
	}
	st.StackFileContent = body.StackFileContent
	st.Env = body.Env
	st.EndpointID = ep.ID
	st.UpdatedBy = userOf(r)
	st.UpdateDate = s.now().Unix()
	writeJSON(w, http.StatusOK, toJSON(st))
}

// deleteStack is DELETE /api/stacks/{id}?endpointId=N: `docker stack rm`, then the record goes.
func (s *Server) deleteStack(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.endpointQuery(w, r); !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.stackOfLocked(w, r)
	if !ok {
		return
	}
	if stderr, err := s.engine.stackRemove(st.Name); err != nil {
		writeError(w, http.StatusInternalServerError, stderr, err.Error())
		return
	}
	delete(s.stacks, st.ID)
	w.WriteHeader(http.StatusNoContent)
}
