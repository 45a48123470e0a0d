package sse

import (
	"sync"
	"syscall"
)

// fanoutSupported: HTTP/1.1 SSE streams are handed to the hub's writers (fanout.go).
const fanoutSupported = true

// writeNonblocking is one write(2) on a non-blocking socket (Go's sockets are): it returns
// EAGAIN or a short count instead of waiting for room.
func writeNonblocking(fd int, p []byte) (int, error) {
	for {
		n, err := syscall.Write(fd, p)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// hangupWatcher reports streams whose client closed or reset the connection, from one epoll
// set and one goroutine for all of them instead of a reader goroutine per stream. The sockets
// stay registered with Go's own poller too (a descriptor may be in several epoll sets); this
// set asks only for EPOLLRDHUP (the peer's FIN), plus the EPOLLHUP and EPOLLERR that epoll
// always reports, once per stream (EPOLLONESHOT), so that data a client sends (it should send
// none) never wakes it.
type hangupWatcher struct {
	epfd     int
	stopR    int // read end of a pipe in the set: closing stopW stops run
	stopW    int
	onHangup func(*streamConn)
	done     chan struct{}

	mu      sync.Mutex
	streams map[uint64]*streamConn // by id; an id is never reused, unlike a descriptor number
	lastID  uint64
}

// stopID is the key of the stop pipe in the epoll set; streams' ids start at 1.
const stopID = 0

func newHangupWatcher(onHangup func(*streamConn)) (*hangupWatcher, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		syscall.Close(epfd)
		return nil, err
	}
	ev := epollEvent(syscall.EPOLLIN, stopID)
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, err
	}
	w := &hangupWatcher{epfd: epfd, stopR: p[0], stopW: p[1], onHangup: onHangup,
		done: make(chan struct{}), streams: map[uint64]*streamConn{}}
	go w.run()
	return w, nil
}

// epollEvent is an event of kinds with data id.
func epollEvent(kinds uint32, id uint64) syscall.EpollEvent {
	return syscall.EpollEvent{Events: kinds, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
}

// track gives s its id; arm then starts watching it.
func (w *hangupWatcher) track(s *streamConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastID++
	s.id = w.lastID
	w.streams[s.id] = s
}

// arm registers s's socket. If that fails (the stream was closed meanwhile), s is forgotten:
// a failing write ends it.
func (w *hangupWatcher) arm(s *streamConn) {
	ev := epollEvent(syscall.EPOLLRDHUP|syscall.EPOLLONESHOT, s.id)
	var err error
	cerr := s.raw.Control(func(fd uintptr) {
		err = syscall.EpollCtl(w.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if cerr != nil || err != nil {
		w.forget(s)
	}
}

// forget stops reporting s; its socket leaves the epoll set when the stream closes it.
func (w *hangupWatcher) forget(s *streamConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.streams, s.id)
}

func (w *hangupWatcher) run() {
	defer close(w.done)
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(w.epfd, events, -1)
		if err == syscall.EINTR { // the runtime's preemption signals interrupt the wait
			continue
		}
		if err != nil { // cannot happen on a valid set; disconnects then show as failing writes
			return
		}
		for _, ev := range events[:n] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if id == stopID {
				return
			}
			w.mu.Lock()
			s := w.streams[id]
			delete(w.streams, id)
			w.mu.Unlock()
			if s != nil {
				w.onHangup(s)
			}
		}
	}
}

// stop ends run and releases the epoll set.
func (w *hangupWatcher) stop() {
	syscall.Close(w.stopW) // the read end reports EPOLLHUP
	<-w.done
	syscall.Close(w.stopR)
	syscall.Close(w.epfd)
}
