package portainer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/portainer"
)

// New refuses bad options with an error that names the setting, and never quotes a credential.
func TestNewValidatesOptions(t *testing.T) {
	jar, _ := cookiejar.New(nil)
	rows := []struct {
		name string
		o    portainer.Options
		want string
	}{
		{"no URL", portainer.Options{APIKey: "k"}, "Options.URL is empty"},
		{"credentials in the URL", portainer.Options{URL: "https://admin:hunter2@host:9443", APIKey: "k"}, "carries credentials"},
		{"another scheme", portainer.Options{URL: "ftp://host", APIKey: "k"}, "scheme must be http or https"},
		{"no host", portainer.Options{URL: "https://", APIKey: "k"}, "has no host"},
		{"the API path", portainer.Options{URL: "https://host:9443/api/", APIKey: "k"}, "ends in /api"},
		{"a query", portainer.Options{URL: "https://host:9443/?x=1", APIKey: "k"}, "remove the query"},
		{"no credentials", portainer.Options{URL: "https://host"}, "no credentials"},
		{"both modes", portainer.Options{URL: "https://host", APIKey: "k", Username: "u", Password: "p"}, "either APIKey or Username/Password"},
		{"user without password", portainer.Options{URL: "https://host", Username: "u"}, "Password is empty"},
		{"password without user", portainer.Options{URL: "https://host", Password: "hunter2"}, "Username is empty"},
		{"cookie jar", portainer.Options{URL: "https://host", APIKey: "k", HTTPClient: &http.Client{Jar: jar}}, "cookie jar"},
		{"TLS options with a client", portainer.Options{URL: "https://host", APIKey: "k", HTTPClient: &http.Client{}, InsecureSkipVerify: true}, "do not apply to HTTPClient"},
		{"CA and no verification", portainer.Options{URL: "https://host", APIKey: "k", CAFile: "ca.pem", InsecureSkipVerify: true}, "contradict"},
		{"CA for http", portainer.Options{URL: "http://host", APIKey: "k", CAFile: "ca.pem"}, "apply to https"},
		{"missing CA file", portainer.Options{URL: "https://host", APIKey: "k", CAFile: "/nonexistent/ca.pem"}, "Options.CAFile"},
		{"CA file not a regular file", portainer.Options{URL: "https://host", APIKey: "k", CAFile: "/dev/zero"}, "/dev/zero is a character device, not a regular file"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			c, err := portainer.New(row.o)
			if err == nil || !strings.Contains(err.Error(), row.want) {
				t.Fatalf("New = %v, %v; want an error containing %q", c, err, row.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error quotes the password: %v", err)
			}
		})
	}
	for _, ok := range []portainer.Options{
		{URL: "https://host:9443", APIKey: "k"},
		{URL: "http://host:9000/portainer/", Username: "u", Password: "p"},
	} {
		if _, err := portainer.New(ok); err != nil {
			t.Errorf("New(%v) = %v", ok, err)
		}
	}
}

// A Secret prints redacted through every path a value takes into output.
func TestSecretIsRedactedEverywhere(t *testing.T) {
	s := portainer.Secret("ptr_very-secret")
	opts := portainer.Options{URL: "https://host", APIKey: s}
	var outputs []string
	for _, format := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%X", "%d"} {
		outputs = append(outputs, fmt.Sprintf(format, s), fmt.Sprintf(format, opts))
	}
	outputs = append(outputs, s.String(), fmt.Sprint(s), fmt.Sprintln(s))
	data, err := json.Marshal(struct {
		APIKey   portainer.Secret
		Password portainer.Secret
	}{s, s})
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(data))
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	log.Info("options", "key", s, "options", opts, "env", portainer.EnvVar{Name: "TOKEN", Value: "env-very-secret", Secret: true})
	slog.New(slog.NewTextHandler(&logged, nil)).Info("options", "key", s, "env", portainer.EnvVar{Name: "TOKEN", Value: "env-very-secret", Secret: true})
	outputs = append(outputs, logged.String())
	for _, out := range outputs {
		if strings.Contains(out, "very-secret") || strings.Contains(out, fmt.Sprintf("%x", "ptr_very-secret")) {
			t.Errorf("secret printed: %s", out)
		}
	}
	if !strings.Contains(logged.String(), "[REDACTED]") || fmt.Sprint(portainer.Secret("")) != "" {
		t.Errorf("want [REDACTED] for a set secret and nothing for an empty one; logged %s", logged.String())
	}
	if got := fmt.Sprint(portainer.EnvVar{Name: "PLAIN", Value: "visible"}); !strings.Contains(got, "visible") {
		t.Errorf("a variable not marked secret prints as %s", got)
	}
}

// Owned is the ownership rule: a Swarm stack record of this Swarm and this endpoint.
func TestOwned(t *testing.T) {
	ours := portainer.Stack{ID: 1, Name: "demo", Type: portainer.StackTypeSwarm, SwarmID: "sw", EndpointID: 1}
	other := func(f func(*portainer.Stack)) portainer.Stack { s := ours; f(&s); return s }
	rows := []struct {
		stack portainer.Stack
		want  bool
	}{
		{ours, true},
		{other(func(s *portainer.Stack) { s.Type = 2 }), false},
		{other(func(s *portainer.Stack) { s.SwarmID = "another" }), false},
		{other(func(s *portainer.Stack) { s.EndpointID = 2 }), false},
	}
	for _, row := range rows {
		if got := portainer.Owned(row.stack, "sw", 1); got != row.want {
			t.Errorf("Owned(%+v, sw, 1) = %v, want %v", row.stack, got, row.want)
		}
	}
}
