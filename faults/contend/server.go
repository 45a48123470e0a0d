package contend

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// Server is a running `lfp-swarm-lease serve`: an elections API replica whose rooms live in the
// Swarm behind one manager, or in an etcd cluster.
type Server struct {
	// URL is its base URL (loopback, or its address in its network namespace).
	URL string
	// Client is the HTTP client that reaches it (from its network namespace).
	Client *http.Client
	cmd    *exec.Cmd
	out    *leasetest.SyncBuffer
	done   chan struct{}
}

// StartServer starts an elections replica on manager host, keeping rooms in namespace's shards,
// and waits until it answers /healthz.
func StartServer(ctx context.Context, bins Binaries, host, namespace string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close() // serve binds it next; nothing else on this machine picks loopback ports at random this fast
	return StartServerWith(ctx, bins, ServerConfig{Listen: addr, Namespace: namespace, Env: []string{"DOCKER_HOST=" + host, "SWARM_LEASE_STORE=swarm"}})
}

// ServerConfig describes one `lfp-swarm-lease serve` replica.
type ServerConfig struct {
	// Listen is its listen address.
	Listen string
	// Namespace is the elections namespace its rooms live in.
	Namespace string
	// NetNS, when set, is the network namespace file it runs in; Dial then dials into it.
	NetNS string
	Dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	// Env is its store settings and any others.
	Env []string
}

// StartServerWith starts an elections replica as cfg says and waits until it answers /healthz.
func StartServerWith(ctx context.Context, bins Binaries, cfg ServerConfig) (*Server, error) {
	cmd := inNetNS(cfg.NetNS, bins.Lease, "serve")
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOSTNAME=fault-serve",
		"SWARM_LEASE_LISTEN=" + cfg.Listen,
		"SWARM_LEASE_ELECTIONS_NAMESPACE=" + cfg.Namespace,
		"SWARM_LEASE_ROOM_SHARDS=2",
		"SWARM_LEASE_ADMISSION_PER_MINUTE=0",
		"SWARM_LEASE_MAX_CLOCK_SKEW_MS=500",
	}, cfg.Env...)
	client := &http.Client{Transport: &http.Transport{DialContext: cfg.Dial}}
	s := &Server{URL: "http://" + cfg.Listen, Client: client, cmd: cmd, out: &leasetest.SyncBuffer{}, done: make(chan struct{})}
	host := cfg.Listen
	cmd.Stdout, cmd.Stderr = s.out, s.out
	// A test binary that dies (a timeout, SIGKILL) takes its contenders with it; the `run`
	// guard then stops the child's group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start serve: %w", err)
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := s.Client.Get(s.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("serve on %s exited at start:\n%s", host, s.Output())
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond): // poll until it listens
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("serve on %s did not answer /healthz within a minute:\n%s", host, s.Output())
		}
	}
}

// Output is what the server wrote so far.
func (s *Server) Output() string { return s.out.String() }

// Stop ends the server (SIGTERM, SIGKILL after 10 s).
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
