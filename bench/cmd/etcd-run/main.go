//go:build linux

// Command etcd-run is the minimal etcd-based counterpart of `lfp-swarm-lease run`, the other
// side of bench-peers' handover and failover comparison (BENCHMARKS.md, "Compared with etcd"):
// what a careful engineer would write in an afternoon with etcd's concurrency package, no more.
//
//	etcd-run -endpoints http://127.0.0.1:2379 -election /app/leader -ttl 2 -- CHILD [ARGS...]
//
// It opens a session (a lease of -ttl seconds, kept alive by the client every TTL/3) and
// campaigns on the election. Once it wins, it starts CHILD with the election's revision (the
// leader key's create revision, which grows from leader to leader) in the variable -fence-env.
//
//   - SIGTERM or SIGINT: SIGTERM to the child, SIGKILL after -grace, then Resign, revoke the
//     session's lease and exit 0. Before winning: give up the campaign and exit 0.
//   - The session is lost (its lease expired or was revoked, Session.Done): SIGKILL the child
//     and exit 1 — another contender may already lead.
//   - The child exits by itself: Resign and exit with the child's status.
//   - etcd-run itself is killed: the child gets SIGTERM from the kernel (parent-death signal);
//     the lease expires after its TTL and the next contender wins.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// config is the command line.
type config struct {
	endpoint string
	election string
	value    string
	ttl      int
	grace    time.Duration
	fenceEnv string
	child    []string
}

func main() {
	var c config
	host, _ := os.Hostname()
	flag.StringVar(&c.endpoint, "endpoints", "http://127.0.0.1:2379", "the etcd client URL, or several separated by commas")
	flag.StringVar(&c.election, "election", "/etcd-run/leader", "the election's key prefix")
	flag.StringVar(&c.value, "value", host+"/"+strconv.Itoa(os.Getpid()), "this contender's value in the election")
	flag.IntVar(&c.ttl, "ttl", 30, "the session's lease TTL in seconds (etcd's unit)")
	flag.DurationVar(&c.grace, "grace", 10*time.Second, "how long the child has to stop after SIGTERM before SIGKILL")
	flag.StringVar(&c.fenceEnv, "fence-env", "ETCD_RUN_FENCE", "the child's environment variable holding the election's revision")
	flag.Parse()
	c.child = flag.Args()
	if len(c.child) == 0 || c.ttl < 1 || c.grace < 0 || c.fenceEnv == "" {
		fmt.Fprintln(os.Stderr, "etcd-run: usage: etcd-run [-endpoints URL] [-election PREFIX] [-ttl SECONDS ≥ 1] [-grace D] [-fence-env NAME] -- CHILD [ARGS...]")
		os.Exit(2)
	}
	code, err := run(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd-run:", err)
	}
	os.Exit(code)
}

// run campaigns, supervises the child while it leads, and returns the exit status.
func run(c config) (int, error) {
	stopping, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cl, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(c.endpoint, ","), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return 1, fmt.Errorf("etcd client: %w", err)
	}
	defer cl.Close()
	session, err := concurrency.NewSession(cl, concurrency.WithTTL(c.ttl))
	if err != nil {
		return 1, fmt.Errorf("session: %w", err)
	}
	// Close revokes the lease, so that a follower stopped while campaigning leaves the queue at
	// once; after a lost session it fails, which changes nothing.
	defer session.Close()
	election := concurrency.NewElection(session, c.election)
	if err := election.Campaign(stopping, c.value); err != nil {
		if stopping.Err() != nil {
			return 0, nil // stopped before winning: Campaign has withdrawn the candidacy
		}
		return 1, fmt.Errorf("campaign: %w", err)
	}

	child := exec.Command(c.child[0], c.child[1:]...)
	child.Env = append(os.Environ(), c.fenceEnv+"="+strconv.FormatInt(election.Rev(), 10))
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	// If etcd-run dies, the child must not outlive it: its lease runs out and another child
	// starts. The kernel sends the signal when the thread that started the child ends, which a
	// Go program's threads do only with the process.
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := child.Start(); err != nil {
		_ = resign(election)
		return 1, fmt.Errorf("start %s: %w", c.child[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	select {
	case <-stopping.Done():
		_ = child.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(c.grace):
			_ = child.Process.Kill()
			<-exited
		}
		if err := resign(election); err != nil {
			return 1, err
		}
		return 0, nil
	case <-session.Done():
		_ = child.Process.Kill()
		<-exited
		return 1, errors.New("session lost (its lease expired): the child was killed")
	case err := <-exited:
		if rerr := resign(election); rerr != nil {
			return 1, rerr
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), nil
		}
		if err != nil {
			return 1, fmt.Errorf("wait for %s: %w", c.child[0], err)
		}
		return 0, nil
	}
}

// resign gives up the leadership, so that the next contender wins without waiting for the TTL.
func resign(e *concurrency.Election) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Resign(ctx); err != nil {
		return fmt.Errorf("resign: %w", err)
	}
	return nil
}
