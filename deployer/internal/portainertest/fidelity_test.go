package portainertest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Each row is one request to a fake without a Docker engine and Portainer's documented answer.
func TestRequestsGetPortainersAnswers(t *testing.T) {
	fixed := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fake := Start(t, Options{
		APIKeys:   []string{testKey},
		Users:     map[string]string{"admin": "s3cret-password"},
		Endpoints: []Endpoint{{ID: 1, Name: "local", Type: 1}, {ID: 2, Name: "other", Type: 1}},
		Now:       func() time.Time { return fixed },
	})
	login := send(t, http.MethodPost, fake.URL()+"/api/auth", nil, map[string]string{"Username": "admin", "Password": "s3cret-password"})
	if login.status != http.StatusOK {
		t.Fatalf("login: %d %s", login.status, login.body)
	}
	var jwt struct{ JWT string }
	if err := json.Unmarshal([]byte(login.body), &jwt); err != nil || jwt.JWT == "" {
		t.Fatalf("login body %s: no jwt (%v)", login.body, err)
	}
	if cookie := login.header.Get("Set-Cookie"); !strings.HasPrefix(cookie, loginCookie+"="+jwt.JWT) {
		t.Fatalf("login Set-Cookie = %q, want the %s cookie holding the JWT", cookie, loginCookie)
	}
	bearer := map[string]string{"Authorization": "Bearer " + jwt.JWT}
	withCookie := map[string]string{"Authorization": "Bearer " + jwt.JWT, "Cookie": loginCookie + "=" + jwt.JWT}
	createBody := map[string]any{"Name": "x", "SwarmID": "swarm", "StackFileContent": "services: {}\n"}
	jsonType := "application/json"

	rows := []struct {
		name        string
		method      string
		path        string
		headers     map[string]string
		body        any
		status      int
		contentType string
		contains    string
	}{
		{"status needs no credentials", "GET", "/api/system/status", nil, nil, 200, jsonType, `"Version":"2.23.0"`},
		{"older status alias", "GET", "/api/status", nil, nil, 200, jsonType, `"Version":"2.23.0"`},
		{"no credentials", "GET", "/api/stacks", nil, nil, 401, jsonType, `{"message":"A valid authorisation token is missing","details":"Unauthorized"}`},
		{"unknown API key", "GET", "/api/stacks", map[string]string{"X-API-Key": "ptr_unknown"}, nil, 401, jsonType, `{"message":"Invalid JWT token","details":"Unauthorized"}`},
		{"API key header in any case", "GET", "/api/stacks", map[string]string{"x-api-key": testKey}, nil, 200, jsonType, `[]`},
		{"JWT", "GET", "/api/stacks", bearer, nil, 200, jsonType, `[]`},
		{"unknown JWT", "GET", "/api/stacks", map[string]string{"Authorization": "Bearer eyJ.x.y"}, nil, 401, jsonType, `{"message":"Invalid JWT token","details":"Unauthorized"}`},
		{"both an API key and a JWT", "GET", "/api/stacks", map[string]string{"X-API-Key": testKey, "Authorization": "Bearer " + jwt.JWT}, nil, 403, jsonType, `{"message":"api key and auth header are not allowed at the same time","details":"api key and auth header are not allowed at the same time"}`},
		{"both, even where no credentials are needed", "GET", "/api/system/status", map[string]string{"X-API-Key": testKey, "Authorization": "Bearer " + jwt.JWT}, nil, 403, jsonType, `"message":"api key and auth header are not allowed at the same time"`},
		{"login cookie on a read", "GET", "/api/stacks", withCookie, nil, 200, jsonType, `[]`},
		{"login cookie on a write", "DELETE", "/api/stacks/1?endpointId=1", withCookie, nil, 403, "text/plain; charset=utf-8", "Forbidden - CSRF token not found in request"},
		{"login cookie on a create", "POST", "/api/stacks/create/swarm/string?endpointId=1", withCookie, createBody, 403, "text/plain; charset=utf-8", "Forbidden - CSRF token not found in request"},
		{"wrong password", "POST", "/api/auth", nil, map[string]string{"Username": "admin", "Password": "nope"}, 422, jsonType, `"message":"Invalid credentials"`},
		{"unknown user", "POST", "/api/auth", nil, map[string]string{"username": "eve", "password": "x"}, 422, jsonType, `"message":"Invalid credentials"`},
		{"login without password", "POST", "/api/auth", nil, map[string]string{"Username": "admin"}, 400, jsonType, `"details":"Invalid password"`},
		{"endpoint by ID", "GET", "/api/endpoints/2", keyed(), nil, 200, jsonType, `"Id":2,"Name":"other","Type":1`},
		{"missing endpoint", "GET", "/api/endpoints/9", keyed(), nil, 404, jsonType, `{"message":"Unable to find an environment with the specified identifier inside the database","details":"Object not found inside the database (bucket=endpoints, key=9)"}`},
		{"endpoint ID that is no number", "GET", "/api/endpoints/x", keyed(), nil, 400, jsonType, `{"message":"Invalid environment identifier route variable","details":"strconv.Atoi: parsing \"x\": invalid syntax"}`},
		{"endpoints by exact name", "GET", "/api/endpoints?name=local&excludeSnapshots=true", keyed(), nil, 200, jsonType, `[{"Id":1,"Name":"local"`},
		{"no endpoint of that name", "GET", "/api/endpoints?name=loc", keyed(), nil, 200, jsonType, `[]`},
		{"missing stack", "GET", "/api/stacks/7", keyed(), nil, 404, jsonType, `{"message":"Unable to find a stack with the specified identifier inside the database","details":"Object not found inside the database (bucket=stacks, key=7)"}`},
		{"missing stack's file", "GET", "/api/stacks/7/file", keyed(), nil, 404, jsonType, `"Unable to find a stack`},
		{"bad filters", "GET", "/api/stacks?filters=%7Bnope", keyed(), nil, 400, jsonType, `"message":"Invalid query parameter: filters"`},
		{"create without endpointId", "POST", "/api/stacks/create/swarm/string", keyed(), createBody, 400, jsonType, `{"message":"Invalid query parameter: endpointId","details":"Missing query parameter"}`},
		{"create on a missing endpoint", "POST", "/api/stacks/create/swarm/string?endpointId=9", keyed(), createBody, 404, jsonType, `"Unable to find an environment`},
		{"create with a name that normalises to nothing", "POST", "/api/stacks/create/swarm/string?endpointId=1", keyed(), map[string]any{"Name": "!!", "SwarmID": "s", "StackFileContent": "x"}, 400, jsonType, `"details":"Invalid stack name"`},
		{"create without Swarm ID", "POST", "/api/stacks/create/swarm/string?endpointId=1", keyed(), map[string]any{"Name": "x", "StackFileContent": "x"}, 400, jsonType, `"details":"Invalid Swarm ID"`},
		{"create without a file", "POST", "/api/stacks/create/swarm/string?endpointId=1", keyed(), map[string]any{"Name": "x", "SwarmID": "s"}, 400, jsonType, `"details":"Invalid stack file content"`},
		{"create without an engine", "POST", "/api/stacks/create/swarm/string?endpointId=1", keyed(), createBody, 500, jsonType, `"message":"Unable to check for name collision"`},
		{"update of a missing stack", "PUT", "/api/stacks/7?endpointId=1", keyed(), map[string]any{"StackFileContent": "x"}, 404, jsonType, `"Unable to find a stack`},
		{"update without endpointId", "PUT", "/api/stacks/7", keyed(), map[string]any{"StackFileContent": "x"}, 400, jsonType, `"Invalid query parameter: endpointId"`},
		{"delete of a missing stack", "DELETE", "/api/stacks/7?endpointId=1", keyed(), nil, 404, jsonType, `"Unable to find a stack`},
		{"delete without endpointId reads the stack first", "DELETE", "/api/stacks/7", keyed(), nil, 404, jsonType, `"Unable to find a stack`},
		{"passthrough without an engine", "GET", "/api/endpoints/1/docker/swarm", keyed(), nil, 500, jsonType, `no Docker engine`},
		{"passthrough of a missing endpoint", "GET", "/api/endpoints/9/docker/info", keyed(), nil, 404, jsonType, `"Unable to find an environment`},
		{"passthrough beyond the client's calls", "GET", "/api/endpoints/1/docker/containers/json", keyed(), nil, 404, jsonType, `proxies only`},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			got := send(t, row.method, fake.URL()+row.path, row.headers, row.body)
			if got.status != row.status || got.contentType != row.contentType || !strings.Contains(got.body, row.contains) {
				t.Errorf("%s %s = %d %q %s, want %d %q containing %s", row.method, row.path, got.status, got.contentType, got.body, row.status, row.contentType, row.contains)
			}
		})
	}

	// Every write is recorded, whatever its answer; logins and reads are not.
	var writes []string
	for _, w := range fake.Writes() {
		writes = append(writes, w.Method+" "+w.Path)
	}
	want := "DELETE /api/stacks/1 POST /api/stacks/create/swarm/string POST /api/stacks/create/swarm/string POST /api/stacks/create/swarm/string POST /api/stacks/create/swarm/string POST /api/stacks/create/swarm/string POST /api/stacks/create/swarm/string POST /api/stacks/create/swarm/string PUT /api/stacks/7 PUT /api/stacks/7 DELETE /api/stacks/7 DELETE /api/stacks/7"
	if strings.Join(writes, " ") != want {
		t.Errorf("Writes() = %v, want %s", writes, want)
	}
}

// Servers before 2.19 have no typed creation path and servers before 2.17 no /api/system/status.
func TestOlderVersionsLackTheNewerPaths(t *testing.T) {
	fake := Start(t, Options{APIKeys: []string{testKey}, Version: "2.16.2"})
	body := map[string]any{"Name": "x", "SwarmID": "s", "StackFileContent": "x"}
	if got := send(t, "POST", fake.URL()+"/api/stacks/create/swarm/string?endpointId=1", keyed(), body); got.status != 404 {
		t.Errorf("new creation path on 2.16: %d %s, want 404", got.status, got.body)
	}
	if got := send(t, "POST", fake.URL()+"/api/stacks?type=1&method=string&endpointId=1", keyed(), body); got.status != 500 || !strings.Contains(got.body, "no Docker engine") {
		t.Errorf("old creation path on 2.16: %d %s, want it to reach the deploy (500 without an engine)", got.status, got.body)
	}
	if got := send(t, "GET", fake.URL()+"/api/system/status", nil, nil); got.status != 404 {
		t.Errorf("/api/system/status on 2.16: %d, want 404", got.status)
	}
	if got := send(t, "GET", fake.URL()+"/api/status", nil, nil); got.status != 200 || !strings.Contains(got.body, `"Version":"2.16.2"`) {
		t.Errorf("/api/status on 2.16: %d %s", got.status, got.body)
	}
}

// More than ten logins in a second from one address ban it: even a right password then gets 403
// "Access denied".
func TestLoginFloodBansTheAddress(t *testing.T) {
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var elapsed atomic.Int64 // the handlers read the clock on their own goroutines
	fake := Start(t, Options{Users: map[string]string{"admin": "pw"}, Now: func() time.Time { return start.Add(time.Duration(elapsed.Load())) }})
	for i := range 10 {
		if got := send(t, "POST", fake.URL()+"/api/auth", nil, map[string]string{"Username": "admin", "Password": "bad"}); got.status != 422 {
			t.Fatalf("login %d: %d %s, want 422", i+1, got.status, got.body)
		}
	}
	got := send(t, "POST", fake.URL()+"/api/auth", nil, map[string]string{"Username": "admin", "Password": "pw"})
	if got.status != 403 || !strings.Contains(got.body, `{"message":"Access denied"}`) {
		t.Fatalf("11th login in a second: %d %s, want 403 Access denied", got.status, got.body)
	}
	elapsed.Add(int64(59 * time.Minute))
	if got := send(t, "POST", fake.URL()+"/api/auth", nil, map[string]string{"Username": "admin", "Password": "pw"}); got.status != 403 {
		t.Fatalf("login 59 minutes into the ban: %d, want 403", got.status)
	}
	elapsed.Add(int64(2 * time.Minute))
	if got := send(t, "POST", fake.URL()+"/api/auth", nil, map[string]string{"Username": "admin", "Password": "pw"}); got.status != 200 {
		t.Fatalf("login after the hour's ban: %d %s, want 200", got.status, got.body)
	}
}

// Stop takes the server down: the next request is refused.
func TestStopRefusesConnections(t *testing.T) {
	fake := Start(t, Options{})
	fake.Stop()
	if _, err := http.Get(fake.URL() + "/api/system/status"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("request after Stop: %v, want connection refused", err)
	}
}
