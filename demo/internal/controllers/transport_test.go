package controllers

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// replicaEnv makes the test binary a controller replica listening on the address it names.
const replicaEnv = "CONTROLLERS_TEST_REPLICA"

func TestMain(m *testing.M) {
	if addr := os.Getenv(replicaEnv); addr != "" {
		serveReplica(addr)
		return
	}
	os.Exit(m.Run())
}

// serveReplica answers as a controller does: GET /v1/state with its own address, GET /v1/events
// with its address as the first event, the stream then held open.
func serveReplica(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/state", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, addr+"\n") })
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: current\ndata: %s\n\n", addr)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	fmt.Fprintln(os.Stdout, "listening")
	http.Serve(ln, mux)
}

// replicas starts three replica processes on 127.0.0.1, .2 and .3 at one port, as DNS round
// robin gives a service's tasks one port on several addresses. It returns their processes, the
// port and a lookup that resolves "controller" to the three addresses.
func replicas(t *testing.T) ([]*exec.Cmd, string, LookupHost) {
	t.Helper()
	ips := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	for try := 0; try < 5; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
		var cmds []*exec.Cmd
		ok := true
		for _, ip := range ips {
			if ip != "127.0.0.1" && !loopbackBindable(ip) {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s cannot be bound here; CI runs on Linux, which routes all of 127.0.0.0/8 to loopback", ip)
				}
				t.Skipf("%s cannot be bound here (only Linux routes all of 127.0.0.0/8 to loopback)", ip)
			}
			cmd, err := startReplica(t, net.JoinHostPort(ip, port))
			if err != nil {
				t.Logf("replica on %s:%s: %v (another port)", ip, port, err)
				ok = false
				break
			}
			cmds = append(cmds, cmd)
		}
		if ok {
			lookup := func(_ context.Context, host string) ([]string, error) {
				if host != "controller" {
					return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
				}
				return ips, nil
			}
			return cmds, port, lookup
		}
	}
	t.Fatal("no port free on all three loopback addresses")
	return nil, "", nil
}

// loopbackBindable reports whether ip, a loopback address, can be listened on.
func loopbackBindable(ip string) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// startReplica starts one replica and waits until it listens; the test's cleanup kills it by
// PID, stopped or not.
func startReplica(t *testing.T, addr string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"="+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "listening\n" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New("did not listen")
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, nil
}

// get reads url through tr on a new connection (each request dials, as a page's reconnect does
// once its stream is dropped) and returns the body's first line.
func get(tr http.RoundTripper, url string) (string, time.Duration, error) {
	start := time.Now()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	req.Close = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := tr.RoundTrip(req.WithContext(ctx))
	if err != nil {
		return "", time.Since(start), err
	}
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	line, err := body.ReadString('\n')
	if strings.HasPrefix(line, "event:") {
		line, err = body.ReadString('\n')
		line = strings.TrimPrefix(line, "data: ")
	}
	return strings.TrimSpace(line), time.Since(start), err
}

// TestAStoppedReplicaIsPassedOver stops one of three replicas with SIGSTOP (its kernel still
// completes handshakes, as with docker pause): every state read and every event stream is still
// answered, by the others, and only the first request that reached the stopped one waits for the
// header timeout.
func TestAStoppedReplicaIsPassedOver(t *testing.T) {
	cmds, port, lookup := replicas(t)
	stopped := "127.0.0.2:" + port
	if err := cmds[1].Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	tr := NewTransport(lookup)
	defer tr.CloseIdleConnections()
	slow := 0
	answeredBy := map[string]int{}
	for i := 0; i < 30; i++ {
		path := "/v1/state"
		if i%2 == 1 {
			path = "/v1/events"
		}
		got, took, err := get(tr, "http://controller:"+port+path)
		if err != nil {
			t.Fatalf("request %d (%s): %v after %v", i, path, err, took)
		}
		if got == stopped || !strings.HasPrefix(got, "127.0.0.") {
			t.Fatalf("request %d (%s) answered %q", i, path, got)
		}
		answeredBy[got]++
		if took >= HeaderTimeout {
			slow++
		}
	}
	if slow > 1 {
		t.Errorf("%d of 30 requests waited for the stopped replica; want at most the first", slow)
	}
	if len(answeredBy) != 2 {
		t.Errorf("answered by %v; want both running replicas (the order is random)", answeredBy)
	}
	// Woken up, it is tried again once the others fail.
	cmds[1].Process.Signal(syscall.SIGCONT)
	cmds[0].Process.Kill()
	cmds[2].Process.Kill()
	cmds[0].Wait()
	cmds[2].Wait()
	if got, took, err := get(tr, "http://controller:"+port+"/v1/state"); err != nil || got != stopped {
		t.Fatalf("with the others gone: %q, %v after %v; want the woken replica's answer", got, err, took)
	}
}

// stalled is a TCP server that accepts connections and never answers, counting them.
func stalled(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int32)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			accepted.Add(1)
		}
	}()
	return ln.Addr().String(), accepted
}

// TestOnlyRequestsWithoutABodyAreSentAgain: a GET is sent to as many replicas as attempts allow;
// a request with a body is sent once, since the stalled replica may yet act on it.
func TestOnlyRequestsWithoutABodyAreSentAgain(t *testing.T) {
	addr, accepted := stalled(t)
	tr := NewTransport(nil)
	defer tr.CloseIdleConnections()
	start := time.Now()
	if _, _, err := get(tr, "http://"+addr+"/v1/state"); err == nil {
		t.Fatal("a stalled server answered")
	}
	if n := accepted.Load(); n != attempts {
		t.Errorf("a GET reached the stalled server on %d connections; want %d", n, attempts)
	}
	if took := time.Since(start); took < attempts*HeaderTimeout {
		t.Errorf("a GET gave up after %v; want %d header timeouts", took, attempts)
	}
	accepted.Store(0)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("a stalled server answered a POST")
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("a POST reached the stalled server on %d connections; want 1", n)
	}
}

// TestACallerThatGivesUpBlamesNoReplica: a request cancelled by its caller is not sent again and
// leaves the replica untried-last.
func TestACallerThatGivesUpBlamesNoReplica(t *testing.T) {
	addr, accepted := stalled(t)
	tr := NewTransport(nil)
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/state", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("a stalled server answered")
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("a cancelled GET was sent on %d connections; want 1", n)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.failed) != 0 {
		t.Errorf("failed replicas %v after the caller gave up; want none", tr.failed)
	}
}
