package main

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// switchingFront stands in front of a ledger that cannot be reached yet: until opened it
// accepts connections and holds them without a word (what a worker meets while Swarm's VIP has
// no healthy demo task, or on a connection to a task that is gone), and from then on it
// forwards every new connection to the ledger.
type switchingFront struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	open   bool
	held   []net.Conn
	heldC  chan struct{} // closed at the first held connection
}

func newSwitchingFront(t *testing.T, target string) *switchingFront {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &switchingFront{ln: ln, target: target, heldC: make(chan struct{})}
	go f.serve()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.held {
			c.Close()
		}
	})
	return f
}

func (f *switchingFront) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		if !f.open {
			if f.held = append(f.held, c); len(f.held) == 1 {
				close(f.heldC)
			}
			f.mu.Unlock()
			continue
		}
		f.mu.Unlock()
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", f.target)
			if err != nil {
				return
			}
			defer up.Close()
			go io.Copy(up, c)
			io.Copy(c, up)
		}()
	}
}

func (f *switchingFront) openUp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open = true
}

// TestWorkerWritesSoonAfterTheLedgerAnswers: a leader's worker starts while the ledger cannot
// be reached (its first write hangs), as at a deployment or a restart of the demo service; once
// the ledger answers, the worker's first write is in it within 2 s, not after a long timeout
// and another interval — the page shows a new leader's writes within a second or two.
func TestWorkerWritesSoonAfterTheLedgerAnswers(t *testing.T) {
	l, srv := ledgerServer(t)
	front := newSwitchingFront(t, strings.TrimPrefix(srv.URL, "http://"))
	_, stderr := startWorkerEvery(t, "http://"+front.ln.Addr().String(), "42", "1000")
	select {
	case <-front.heldC:
	case <-time.After(10 * time.Second):
		t.Fatalf("the worker did not try to write within 10 s:\n%s", stderr)
	}
	front.openUp()
	opened := time.Now()
	waitFor(t, "the worker's first write", func() bool { return l.Snapshot().Counts.Accepted > 0 })
	if took := time.Since(opened); took > 2*time.Second {
		t.Fatalf("the first write came %v after the ledger answered, want within 2 s:\n%s", took.Round(time.Millisecond), stderr)
	}
}
