// Package netns opens TCP connections from inside a network namespace, so that the fault
// campaign's test process, which stays in the host's namespace, can talk to servers that live
// in the cluster's namespaces (their etcd members, their serve replicas): the connection
// belongs to the namespace it was created in, whichever thread later uses it.
package netns

import (
	"context"
	"fmt"
	"net"
	"runtime"

	"golang.org/x/sys/unix"
)

// Path is the file of a namespace created by `ip netns add name`.
func Path(name string) string { return "/run/netns/" + name }

// Dialer returns a dial function whose connections are made in the network namespace at path.
//
// The socket is created on a thread switched into that namespace for the call: the goroutine
// is locked to its thread, the thread enters the namespace (setns), dials, and goes back. A
// thread that cannot go back stays locked, and the runtime ends it with the goroutine, so no
// other goroutine ever runs in the wrong namespace. The runtime starts new threads from a
// template thread while a goroutine is locked, so none inherits the namespace either.
func Dialer(path string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		target, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("netns: open %s: %w", path, err)
		}
		defer unix.Close(target)
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			return nil, fmt.Errorf("netns: this thread's namespace: %w", err)
		}
		defer unix.Close(home)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			return nil, fmt.Errorf("netns: enter %s: %w", path, err)
		}
		// One address literal, no fallback: the socket is created on this goroutine's thread.
		conn, dialErr := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err := unix.Setns(home, unix.CLONE_NEWNET); err != nil {
			if conn != nil {
				conn.Close()
			}
			return nil, fmt.Errorf("netns: back from %s: %w", path, err) // the thread stays locked and dies
		}
		runtime.UnlockOSThread()
		return conn, dialErr
	}
}

// GRPCDialer is Dialer for a gRPC client's context dialer (TCP).
func GRPCDialer(path string) func(ctx context.Context, addr string) (net.Conn, error) {
	dial := Dialer(path)
	return func(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, "tcp", addr) }
}
