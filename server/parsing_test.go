package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/memstore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/elections"
)

// electionsServer serves the controller endpoints of a memory-store election and the
// elections API, over loopback HTTP, until the test ends.
func electionsServer(t *testing.T) string {
	t.Helper()
	m, err := rooms.New(rooms.NewMemoryStore(), "parsing", rooms.WithMaxClockSkew(0))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := serve(t, memstore.New(), server.Options{Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}})
	return base
}

// send makes one request and returns its status, headers and body.
func send(t *testing.T, method, url, contentType, body string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestJSONMediaTypesAreCaseInsensitive: a media type's name is case-insensitive and its
// parameters do not make JSON something else.
func TestJSONMediaTypesAreCaseInsensitive(t *testing.T) {
	base := electionsServer(t)
	for i, ct := range []string{"APPLICATION/JSON", "application/json; charset=UTF-8", "Application/Json;Charset=utf-8", "application/JSON ; charset=\"utf-8\""} {
		room := "/elections/media-type-" + string(rune('a'+i)) + "0001"
		status, _, body := send(t, http.MethodPost, base+room+"/campaign", ct, `{"candidate_id":"a"}`)
		if status != http.StatusOK || !strings.Contains(body, `"status":"leader"`) {
			t.Errorf("campaign with Content-Type %q: %d %s", ct, status, body)
		}
	}
	for _, ct := range []string{"text/plain", "application/jsonx", ""} {
		if status, _, body := send(t, http.MethodPost, base+"/elections/media-type-z0001/campaign", ct, `{"candidate_id":"a"}`); status != http.StatusUnsupportedMediaType {
			t.Errorf("campaign with Content-Type %q: %d %s, want 415", ct, status, body)
		}
	}
}

// TestHeadOnEveryGetEndpoint: HEAD answers every GET endpoint with GET's status and headers
// and no body; on the streams, with the headers of an opened stream, at once.
func TestHeadOnEveryGetEndpoint(t *testing.T) {
	base := electionsServer(t)
	pollUntilOK(t, base+"/v1/state")
	for _, c := range []struct {
		path       string
		sameLength bool // the body is the same on every call, so Content-Length must match
	}{
		{"/healthz", true}, {"/readyz", true}, {"/v1/info", true}, {"/v1/state", false}, {"/openapi.json", true},
		{"/openapi.yaml", true}, {"/metrics", false}, {"/docs/", true}, {"/docs", true}, {"/elections/head-room-0001", true}, {"/elections/bad", true},
	} {
		getStatus, getHeader, _ := send(t, http.MethodGet, base+c.path, "", "")
		status, header, body := send(t, http.MethodHead, base+c.path, "", "")
		if status != getStatus || body != "" {
			t.Errorf("HEAD %s: %d with %d body bytes; GET: %d", c.path, status, len(body), getStatus)
		}
		for _, h := range []string{"Content-Type", "Cache-Control", "Location"} {
			if header.Get(h) != getHeader.Get(h) {
				t.Errorf("HEAD %s: %s %q, GET's %q", c.path, h, header.Get(h), getHeader.Get(h))
			}
		}
		if c.sameLength && header.Get("Content-Length") != getHeader.Get("Content-Length") {
			t.Errorf("HEAD %s: Content-Length %q, GET's %q", c.path, header.Get("Content-Length"), getHeader.Get("Content-Length"))
		}
	}
	for _, path := range []string{"/v1/events", "/elections/head-room-0001/watch"} {
		status, header, body := send(t, http.MethodHead, base+path, "", "")
		if status != http.StatusOK || header.Get("Content-Type") != "text/event-stream" || body != "" {
			t.Errorf("HEAD %s: %d %q %q", path, status, header.Get("Content-Type"), body)
		}
	}
	if status, _, _ := send(t, http.MethodHead, base+"/elections/bad/watch", "", ""); status != http.StatusBadRequest {
		t.Errorf("HEAD of a watch with an invalid room id: %d, want GET's 400", status)
	}
}

// pollUntilOK waits until url answers 200 (the server's first read of the store).
func pollUntilOK(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if status, _, _ := send(t, http.MethodGet, url, "", ""); status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered 200", url)
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

// TestBodyDecodeErrors: bodies that encoding/json would accept silently or describe in Go's
// terms are refused in the contract's error shape, naming the field.
func TestBodyDecodeErrors(t *testing.T) {
	base := electionsServer(t)
	const token = "tok3nTOK3Ntok3nTOK3Ntok3nTOK3Ntok3nTOK3Nabc"
	for _, c := range []struct {
		op, body string
		status   int
		want     string
	}{
		{"campaign", `{"candidate_id":"a","candidate_id":"b"}`, 400, `duplicate key \"candidate_id\"`},
		{"renew", `{"leader_token":"` + token + `","leader_token":"x"}`, 400, `duplicate key \"leader_token\"`},
		{"campaign", `{"candidate_id":"a","` + token + `":1,"` + token + `":2}`, 400, "duplicate key (a key of 43 bytes)"},
		{"campaign", "{\"candidate_id\":\"a\",\"metadata\":\"caf\xe9\"}", 400, "metadata: malformed JSON: not valid UTF-8"},
		{"campaign", `{"candidate_id":"a","metadata":"\ud800"}`, 400, "metadata: malformed JSON: not valid UTF-8"},
		{"campaign", "{\"candidate_id\":\"a\xff\"}", 400, "candidate_id: malformed JSON: not valid UTF-8"},
		{"campaign", `{"candidate_id":5}`, 422, "candidate_id"},
		{"campaign", `{"candidate_id":"a","ttl_seconds":1e400}`, 400, "ttl_seconds: the number is out of range"},
		{"resign", `{"leader_token":` + token + `}`, 400, "malformed JSON"},
	} {
		status, _, body := send(t, http.MethodPost, base+"/elections/decode-room-0001/"+c.op, "application/json", c.body)
		if status != c.status || !strings.Contains(body, c.want) || !strings.Contains(body, `"code":"invalid_input"`) {
			t.Errorf("%s %q: %d %s, want %d naming %q", c.op, c.body, status, body, c.status, c.want)
		}
		for _, leak := range []string{"Go ", "struct", "of type", "json:", "float64", token} {
			if strings.Contains(body, leak) {
				t.Errorf("%s %q: the error contains %q: %s", c.op, c.body, leak, body)
			}
		}
	}
}
