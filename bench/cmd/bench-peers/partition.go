package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// A partition (-partitions) cuts the leader's supervisor off from every etcd member while it
// and its child run on: each contender of the etcd kinds reaches each member through a link of
// its own, a TCP relay on loopback, and cutting a contender's links stops them passing bytes
// either way. Connections stay open and new ones are accepted and left unanswered, as when a
// network drops packets: the supervisor learns of the partition only from answers that do not
// come. Neither kind can tell a partition from a dead store, so its successor comes when its
// lease has expired; the figure that differs is whether the partitioned leader's child still
// runs then.

// link relays one contender's connections to one etcd member until it is cut.
type link struct {
	ln     net.Listener
	target string // the member's host:port
	cut    chan struct{}
	once   sync.Once

	mu     sync.Mutex
	closed bool
	conns  []net.Conn
}

// newLink starts a relay on a loopback port of its own to target (host:port).
func newLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, target: target, cut: make(chan struct{})}
	go l.accept()
	return l, nil
}

// addr is where the contender connects instead of the member.
func (l *link) addr() string { return l.ln.Addr().String() }

// accept relays every connection until the link is closed. Any other error of Accept (out of
// file descriptors) is waited out: a link that stopped accepting would cut its contender off in
// the middle of an unrelated measurement.
func (l *link) accept() {
	for {
		c, err := l.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			_ = timing.Sleep(context.Background(), 10*time.Millisecond) // a back-off, not synchronisation
			continue
		}
		if !l.track(c) {
			return // closed meanwhile: track closed c
		}
		go l.relay(c)
	}
}

// track remembers c, to be closed with the link; false when the link is closed.
func (l *link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return false
	}
	l.conns = append(l.conns, c)
	return true
}

// relay connects c to the member and passes bytes both ways while the link is not cut.
func (l *link) relay(c net.Conn) {
	select {
	case <-l.cut: // a connection made during the partition is never answered
		return
	default:
	}
	m, err := net.Dial("tcp", l.target)
	if err != nil {
		c.Close()
		return
	}
	if !l.track(m) {
		return
	}
	go l.pass(m, c)
	l.pass(c, m)
}

// pass copies src to dst until either side ends or the link is cut. An end on one side ends
// the other (both connections closed), so that neither the far end nor the copy the other way
// waits on a connection nobody uses. Once cut it stops reading, so that what the sender writes
// piles up in the kernel's buffers as behind a dropped route.
func (l *link) pass(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-l.cut:
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			src.Close()
			dst.Close()
			return
		}
	}
}

// partition cuts the link: no byte passes after it, either way.
func (l *link) partition() { l.once.Do(func() { close(l.cut) }) }

// close stops the relay and closes every connection it made.
func (l *link) close() {
	l.partition()
	l.ln.Close()
	l.mu.Lock()
	conns := l.conns
	l.conns, l.closed = nil, true
	l.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// links are the links of an election's contenders, by holder.
type links struct {
	members []string // the members' host:port
	mu      sync.Mutex
	by      map[string][]*link
}

func newLinks(endpoints []string) *links {
	ls := &links{by: map[string][]*link{}}
	for _, ep := range endpoints {
		ls.members = append(ls.members, strings.TrimPrefix(ep, "http://"))
	}
	return ls
}

// open starts holder's links, one per member, and returns their addresses in the members'
// order.
func (ls *links) open(holder string) ([]string, error) {
	var addrs []string
	var opened []*link
	for _, m := range ls.members {
		l, err := newLink(m)
		if err != nil {
			for _, o := range opened {
				o.close()
			}
			return nil, err
		}
		opened = append(opened, l)
		addrs = append(addrs, l.addr())
	}
	ls.mu.Lock()
	ls.by[holder] = opened
	ls.mu.Unlock()
	return addrs, nil
}

// partition cuts every link of holder.
func (ls *links) partition(holder string) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.by[holder]) == 0 {
		return fmt.Errorf("no links of %s to cut", holder)
	}
	for _, l := range ls.by[holder] {
		l.partition()
	}
	return nil
}

// close closes every link.
func (ls *links) close() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, hl := range ls.by {
		for _, l := range hl {
			l.close()
		}
	}
	ls.by = map[string][]*link{}
}

// partitionLeader cuts the leader's supervisor off from etcd and returns the cut → the next
// child's start, and whether the partitioned leader's child still ran then (its last heartbeat
// came later). The partitioned supervisor is left alone until its child has stopped beating, or
// a TTL after the next start, so that the run's overlap check says how long a child that ran on
// did; then it is SIGKILLed: a partition that never heals.
func (cs *contenders) partitionLeader(ctx context.Context) (took time.Duration, ranOn bool, err error) {
	leader, starts, err := cs.prepare(ctx)
	if err != nil {
		return 0, false, err
	}
	p := cs.take(leader)
	cut := time.Now()
	if err := cs.e.partition(leader.Holder); err != nil {
		return 0, false, err
	}
	next, err := cs.nextStart(ctx, starts, 4*cs.ttl+10*time.Second, "a new child after the partition")
	if err == nil {
		err = cs.waitQuiet(ctx, leader, time.Unix(0, next.Start).Add(cs.ttl))
	}
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	if err != nil {
		return 0, false, err
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		return 0, false, fmt.Errorf("%s did not exit within 10 s of SIGKILL:\n%s", filepath.Base(p.cmd.Path), p.out.String())
	}
	// The child may still be dying and write its heartbeat in place: read until a read parses.
	var beat int64
	for range 10 {
		if beat, err = lastBeat(beatsDir(cs.dir), leader); err == nil {
			break
		}
		_ = timing.Sleep(ctx, 10*time.Millisecond) // the heartbeat's interval
	}
	if err != nil {
		return 0, false, err
	}
	if _, terms, err := cs.read(); err == nil && !slices.ContainsFunc(terms, func(t check.Term) bool { return t.Child() == leader.Child() && t.Stop != 0 }) {
		cs.killed[leader.Child()] = beat // killed without a word: it logged no end
	}
	return time.Duration(next.Start - cut.UnixNano()), beat > next.Start, nil
}

// quietFor is how long without a heartbeat (every 10 ms) makes a child stopped: 25 beats
// missed, so that a scheduling or GC stall of a running child is not taken for its end, which
// would cut short the run-on the benchmark measures.
const quietFor = 250 * time.Millisecond

// waitQuiet waits until child's heartbeats have stopped for quietFor, or until deadline; only
// ctx's end is an error.
func (cs *contenders) waitQuiet(ctx context.Context, child check.Term, deadline time.Time) error {
	for {
		// A read may meet a write of the file in place: read again at the next poll.
		beat, err := lastBeat(beatsDir(cs.dir), child)
		if now := time.Now(); (err == nil && now.Sub(time.Unix(0, beat)) >= quietFor) || now.After(deadline) {
			return nil
		}
		if err := timing.Sleep(ctx, 10*time.Millisecond); err != nil { // poll interval of the heartbeat
			return err
		}
	}
}
