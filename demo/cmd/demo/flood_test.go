package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// floodConns is the flood: idle keep-alive connections that fill a 1,024-descriptor limit but
// for a handful.
const floodConns = 1015

// idleConn opens a keep-alive connection to addr from the loopback address from, completes one
// request on it and leaves it open and idle; nil if the server did not answer within 5 s.
func idleConn(addr, from string) net.Conn {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: demo\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil
	}
	resp.Body.Close()
	c.SetDeadline(time.Time{})
	return c
}

// TestWritesGetThroughAConnectionFlood: demo serve at a 1,024-descriptor limit, flooded with
// 1,015 idle keep-alive connections to the page's address from eight loopback addresses, still
// serves a worker's write at once: the connections of each address are bounded (the bounds
// leave descriptors for the ledger, the proxy and the write address) and waiting ones are shed
// to admit new ones.
func TestWritesGetThroughAConnectionFlood(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is missing: it sets the server's descriptor limit")
	}
	dir := t.TempDir()
	e := startElection(t)
	e.newTerm(t, "worker")
	cmd := exec.Command("prlimit", "--nofile=1024:1024", "--", demoBin, "serve", "--listen", "127.0.0.1:0",
		"--write-listen", "127.0.0.1:0", "--data", dir, "--controller", e.url)
	p := startServeCmd(t, dir, cmd)
	if p.base == "" {
		t.Fatalf("demo serve exited before it listened:\n%s", p.stderr)
	}
	addr := strings.TrimPrefix(p.base, "http://")

	var wg sync.WaitGroup
	var opened atomic.Int64
	conns := make(chan net.Conn, floodConns)
	for i := range floodConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c := idleConn(addr, fmt.Sprintf("127.0.0.%d", 2+i%8)); c != nil {
				opened.Add(1)
				conns <- c
			}
		}()
	}
	wg.Wait()
	close(conns)
	t.Cleanup(func() {
		for c := range conns {
			c.Close()
		}
	})
	t.Logf("%d of %d flood connections were served", opened.Load(), floodConns)

	worker := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 3 {
		resp, err := worker.Post(p.writes+"/api/ledger/entries", "application/json",
			strings.NewReader(fmt.Sprintf(`{"fence":%d,"holder":"worker"}`, 10+i)))
		if err != nil {
			t.Fatalf("worker write %d during the flood: %v\n%s", i, err, tail(p.stderr.String()))
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("worker write %d during the flood: %s", i, resp.Status)
		}
	}
	if strings.Contains(p.stderr.String(), "too many open files") {
		t.Fatalf("demo serve ran out of descriptors:\n%s", tail(p.stderr.String()))
	}
}

// tail is the end of a long log.
func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
