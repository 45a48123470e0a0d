package portainertest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// With Echo, a failed request's answer keeps Portainer's status and message and quotes the
// request — in the JSON details, or as plain text — and a successful one is Portainer's.
func TestEchoQuotesFailedRequests(t *testing.T) {
	for _, plain := range []bool{false, true} {
		fake := Start(t, Options{APIKeys: []string{testKey}, Users: map[string]string{"admin": "right"},
			Echo: &Echo{Quote: func(request string) string { return "<" + request + ">" }, PlainText: plain}})
		bad := send(t, http.MethodPost, fake.URL()+"/api/auth", map[string]string{"X-API-Key": "ptr_unknown"}, map[string]string{"Username": "admin", "Password": "wrong"})
		quote := `<X-API-Key: ptr_unknown` + "\n" + `{"Password":"wrong","Username":"admin"}>`
		if bad.status != http.StatusUnprocessableEntity {
			t.Fatalf("plain=%v: a bad login answered %d, want Portainer's 422", plain, bad.status)
		}
		if plain {
			if !strings.HasPrefix(bad.contentType, "text/plain") || bad.body != "Invalid credentials: "+quote {
				t.Errorf("plain text: %s %q, want Portainer's message and the quote", bad.contentType, bad.body)
			}
		} else {
			var answer struct{ Message, Details string }
			if err := json.Unmarshal([]byte(bad.body), &answer); err != nil || answer.Message != "Invalid credentials" || answer.Details != "Unauthorized "+quote {
				t.Errorf("JSON: %q (%v), want Portainer's message, and its details with the quote", bad.body, err)
			}
		}
		if ok := send(t, http.MethodGet, fake.URL()+"/api/endpoints/1", keyed(), nil); ok.status != http.StatusOK || strings.Contains(ok.body, "<") || ok.header.Get(csrfHeader) == "" {
			t.Errorf("plain=%v: a successful call: %d %s, want Portainer's answer", plain, ok.status, ok.body)
		}
	}
}
