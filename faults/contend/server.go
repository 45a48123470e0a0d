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
)

// Server is a running `lfp-swarm-lease serve`: an elections API replica whose rooms live in the
// Swarm behind one manager.
type Server struct {
	// URL is its base URL (loopback).
	URL  string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
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
	cmd := exec.Command(bins.Lease, "serve")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOSTNAME=fault-serve",
		"DOCKER_HOST=" + host,
		"SWARM_LEASE_STORE=swarm",
		"SWARM_LEASE_LISTEN=" + addr,
		"SWARM_LEASE_ELECTIONS_NAMESPACE=" + namespace,
		"SWARM_LEASE_ROOM_SHARDS=2",
		"SWARM_LEASE_ADMISSION_PER_MINUTE=0",
		"SWARM_LEASE_MAX_CLOCK_SKEW_MS=500",
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
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
		resp, err := http.Get(s.URL + "/healthz")
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
