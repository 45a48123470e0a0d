package portainertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// engine is the Docker engine behind the fake's endpoints: its HTTP API (for the passthrough and
// the external-stack check) and the docker CLI (for stack deploy and rm, as Portainer runs them).
type engine struct {
	host      string // DOCKER_HOST form; "" when none was configured
	transport *http.Transport
	// environ is Portainer's own process environment, which the docker CLI runs with.
	environ []string
}

// errNoEngine answers the calls that need an engine when Options.DockerHost is empty.
var errNoEngine = errors.New("portainertest: no Docker engine: set Options.DockerHost")

// cliTimeout bounds one docker CLI run (a stack deploy resolves every image in its registry).
const cliTimeout = 3 * time.Minute

func newEngine(host string, environ []string) *engine {
	e := &engine{host: host, environ: environ}
	if host == "" {
		return e
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	e.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if path, ok := strings.CutPrefix(host, "unix://"); ok {
				return dialer.DialContext(ctx, "unix", path)
			}
			return dialer.DialContext(ctx, "tcp", strings.TrimPrefix(host, "tcp://"))
		},
	}
	return e
}

// passthroughPaths are the Docker API paths the fake proxies (those the deployer's client
// uses), after an optional /vX.Y version prefix.
var passthroughPaths = map[string]bool{"swarm": true, "info": true, "services": true}

// passthrough proxies GET /api/endpoints/{id}/docker/{path...} to the engine, without the
// caller's credentials.
func (e *engine) passthrough(w http.ResponseWriter, r *http.Request, dockerPath string) {
	unversioned := dockerPath
	if first, rest, ok := strings.Cut(dockerPath, "/"); ok && strings.HasPrefix(first, "v") {
		unversioned = rest
	}
	if !passthroughPaths[unversioned] {
		writeError(w, http.StatusNotFound, "portainertest proxies only GET swarm, info and services", dockerPath)
		return
	}
	if e.transport == nil {
		writeError(w, http.StatusInternalServerError, "Unable to proxy the request to the Docker engine", errNoEngine.Error())
		return
	}
	proxy := &httputil.ReverseProxy{
		Transport: e.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: "docker", Path: "/" + dockerPath, RawQuery: r.URL.RawQuery}
			pr.Out.Host = "docker"
			for _, h := range []string{"X-API-Key", "Authorization", "Cookie", csrfHeader} {
				pr.Out.Header.Del(h)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeError(w, http.StatusBadGateway, "Unable to proxy the request to the Docker engine", err.Error())
		},
	}
	proxy.ServeHTTP(w, r)
}

// nameInUse reports whether the engine has a stack of that name or a Compose project of it:
// services labelled with the stack namespace name, or containers labelled with the Compose
// project name. Portainer refuses a stack name either holds.
func (e *engine) nameInUse(ctx context.Context, name string) (bool, error) {
	services, err := e.stackServices(ctx, name)
	if err != nil || len(services) > 0 {
		return len(services) > 0, err
	}
	var containers []json.RawMessage
	err = e.get(ctx, "/containers/json", url.Values{"all": {"1"}, "filters": {labelFilter("com.docker.compose.project=" + name)}}, &containers)
	return len(containers) > 0, err
}

// stackServices returns the names of the engine's services labelled with the stack namespace
// name: an external stack when no record has that name.
func (e *engine) stackServices(ctx context.Context, name string) ([]string, error) {
	var services []struct{ Spec struct{ Name string } }
	if err := e.get(ctx, "/services", url.Values{"filters": {labelFilter("com.docker.stack.namespace=" + name)}}, &services); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(services))
	for _, s := range services {
		names = append(names, s.Spec.Name)
	}
	return names, nil
}

// labelFilter is the Docker API's filters parameter for one label.
func labelFilter(label string) string {
	filters, _ := json.Marshal(map[string][]string{"label": {label}})
	return string(filters)
}

// get decodes the engine's answer to GET path?query into out.
func (e *engine) get(ctx context.Context, path string, query url.Values, out any) error {
	if e.transport == nil {
		return errNoEngine
	}
	u := url.URL{Scheme: "http", Host: "docker", Path: path, RawQuery: query.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: e.transport, Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("docker: GET %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	return json.Unmarshal(body, out)
}

// stackDeploy runs `docker stack deploy` as Portainer does (see deployArgs) against the
// engine, with Portainer's own process environment plus the stack's Env (which wins over a
// variable of the same name), so that ${VAR} in the file takes Env's value, or else
// Portainer's. It returns the CLI's stderr as it is.
func (e *engine) stackDeploy(dir, name, content string, env []EnvVar, prune, pull bool) (string, error) {
	if e.host == "" {
		return errNoEngine.Error(), errNoEngine
	}
	file, err := os.CreateTemp(dir, "stack-*.yml")
	if err != nil {
		return "", err
	}
	defer os.Remove(file.Name())
	if _, err := file.WriteString(content); err != nil {
		file.Close()
		return "", err
	}
	if err := file.Close(); err != nil {
		return "", err
	}
	vars := make([]string, 0, len(env))
	for _, v := range env {
		vars = append(vars, v.Name+"="+v.Value)
	}
	return e.docker(filepath.Dir(file.Name()), vars, deployArgs(file.Name(), name, prune, pull)...)
}

// deployArgs are the docker CLI's arguments of a deploy as Portainer runs it: always with the
// registry credentials, --prune on request, and --resolve-image=never when the deploy must
// not pull (an update with PullImage false; a create always pulls).
func deployArgs(file, name string, prune, pull bool) []string {
	args := []string{"stack", "deploy", "--with-registry-auth"}
	if prune {
		args = append(args, "--prune")
	}
	if !pull {
		args = append(args, "--resolve-image=never")
	}
	return append(args, "-c", file, name)
}

// stackRemove runs `docker stack rm <name>` (which leaves volumes alone).
func (e *engine) stackRemove(name string) (string, error) {
	if e.host == "" {
		return errNoEngine.Error(), errNoEngine
	}
	return e.docker("", nil, "stack", "rm", name)
}

// docker runs the CLI against the engine (-H, as Portainer points it at an environment) with
// Portainer's process environment plus vars, returning stderr as it is.
func (e *engine) docker(dir string, vars []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", append([]string{"-H", e.host}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(e.environ), vars...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}
