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
	"strings"
	"time"
)

// engine is the Docker engine behind the fake's endpoints: its HTTP API (for the passthrough and
// the external-stack check) and the docker CLI (for stack deploy and rm, as Portainer runs them).
type engine struct {
	host      string // DOCKER_HOST form; "" when none was configured
	transport *http.Transport
}

// errNoEngine answers the calls that need an engine when Options.DockerHost is empty.
var errNoEngine = errors.New("portainertest: no Docker engine: set Options.DockerHost")

// cliTimeout bounds one docker CLI run (a stack deploy resolves every image in its registry).
const cliTimeout = 3 * time.Minute

func newEngine(host string) *engine {
	e := &engine{host: host}
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

// stackServices returns the names of the engine's services labelled with the stack namespace
// name: an external stack when no record has that name.
func (e *engine) stackServices(ctx context.Context, name string) ([]string, error) {
	if e.transport == nil {
		return nil, errNoEngine
	}
	filters, _ := json.Marshal(map[string][]string{"label": {"com.docker.stack.namespace=" + name}})
	u := url.URL{Scheme: "http", Host: "docker", Path: "/services", RawQuery: url.Values{"filters": {string(filters)}}.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: e.transport, Timeout: time.Minute}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("docker: GET /services: %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	var services []struct{ Spec struct{ Name string } }
	if err := json.Unmarshal(body, &services); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(services))
	for _, s := range services {
		names = append(names, s.Spec.Name)
	}
	return names, nil
}

// stackDeploy runs `docker stack deploy --with-registry-auth [--prune] -c <file> <name>` as
// Portainer does: the stack's Env is the process environment (so ${VAR} in the file takes its
// values), plus PATH and HOME to find and run the CLI, and DOCKER_HOST last so that no Env
// entry can point the deploy at another engine. It returns the CLI's stderr.
func (e *engine) stackDeploy(dir, name, content string, env []EnvVar, prune bool) (string, error) {
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
	args := []string{"stack", "deploy", "--with-registry-auth"}
	if prune {
		args = append(args, "--prune")
	}
	args = append(args, "-c", file.Name(), name)
	vars := make([]string, 0, len(env)+3)
	for _, v := range env {
		vars = append(vars, v.Name+"="+v.Value)
	}
	return e.docker(filepath.Dir(file.Name()), vars, args...)
}

// stackRemove runs `docker stack rm <name>` (which leaves volumes alone).
func (e *engine) stackRemove(name string) (string, error) {
	if e.host == "" {
		return errNoEngine.Error(), errNoEngine
	}
	return e.docker("", nil, "stack", "rm", name)
}

// docker runs the CLI with exactly vars plus PATH, HOME and DOCKER_HOST, returning stderr.
func (e *engine) docker(dir string, vars []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Dir = dir
	cmd.Env = append(vars, "PATH="+os.Getenv("PATH"), "HOME="+os.Getenv("HOME"), "DOCKER_HOST="+e.host)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return strings.TrimSpace(stderr.String()), err
}
