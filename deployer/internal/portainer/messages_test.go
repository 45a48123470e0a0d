package portainer_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainertest"
)

// Portainer answers a failed deploy with the docker CLI's stderr as the message — ending in a
// newline — and the same text capitalised as the details. The error shows it once, on its own
// line of text, so that what the caller adds follows on the same line.
func TestFailedDeployShowsTheCLIErrorOnce(t *testing.T) {
	const stderr = "failed to create service lfp-demo_web: Error response from daemon: network outside not found\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": stderr, "details": "F" + stderr[1:]})
	}))
	t.Cleanup(srv.Close)
	_, err := newClient(t, optionsFor(srv.URL)).UpdateStack(testContext(t), 7, 1, portainer.UpdateStackRequest{StackFileContent: "services: {}"})
	want := "portainer: update stack 7: 500 Internal Server Error: " + strings.TrimSuffix(stderr, "\n")
	if err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

// An environment name that Portainer does not have is an error that says which name was not
// found, once: what to do about it is the caller's to add.
func TestUnknownEndpointNameIsSaidOnce(t *testing.T) {
	fake := portainertest.Start(t, fakeOptions(""))
	_, err := keyClient(t, fake).Endpoint(testContext(t), "nowhere")
	if !errors.Is(err, portainer.ErrEndpointNotFound) {
		t.Fatalf("Endpoint(nowhere) = %v, want ErrEndpointNotFound", err)
	}
	if got, want := err.Error(), `portainer: endpoint "nowhere": not found`; got != want {
		t.Fatalf("error %q, want %q", got, want)
	}
}
