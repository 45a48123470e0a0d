// Command swarm-cluster starts a three-manager Swarm (faults/cluster) for trying faults by
// hand, prints each manager's DOCKER_HOST, and reads fault commands from stdin, one a line:
//
//	kill N | stop N | start N | partition N | heal N | pause N | resume N | leader | status | quit
//
// End of input, quit, SIGINT or SIGTERM tear the cluster down. Run as root:
//
//	go run ./faults/cmd/swarm-cluster
package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/cluster"
)

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Start(ctx, cluster.Options{Logf: log.Printf})
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			log.Print(err)
		}
		log.Print("cluster removed")
	}()
	for n := 1; n <= cluster.Nodes; n++ {
		fmt.Printf("node%d: DOCKER_HOST=%s\n", n, c.Host(n))
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		fmt.Print("> ")
		select {
		case <-ctx.Done():
			return
		case line, ok := <-lines:
			if !ok {
				return
			}
			if quit := do(ctx, c, strings.Fields(line)); quit {
				return
			}
		}
	}
}

// do runs one command; it reports whether to quit.
func do(ctx context.Context, c *cluster.Cluster, args []string) bool {
	if len(args) == 0 {
		return false
	}
	callCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	switch args[0] {
	case "quit", "exit":
		return true
	case "leader":
		for n := 1; n <= cluster.Nodes; n++ {
			if l, err := c.Leader(callCtx, n); err == nil {
				fmt.Printf("node%d sees node%d as the Raft leader\n", n, l)
			} else {
				fmt.Printf("node%d: %v\n", n, err)
			}
		}
		return false
	case "status":
		for n := 1; n <= cluster.Nodes; n++ {
			status, err := c.Managers(callCtx, n)
			fmt.Printf("via node%d: %v %v\n", n, status, errOrEmpty(err))
		}
		return false
	}
	if len(args) != 2 {
		fmt.Println("usage: kill|stop|start|partition|heal|pause|resume N, leader, status, quit")
		return false
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 || n > cluster.Nodes {
		fmt.Printf("%q: the node must be 1 to %d\n", args[1], cluster.Nodes)
		return false
	}
	faults := map[string]func() error{
		"kill":      func() error { return c.Kill(n) },
		"stop":      func() error { return c.Stop(n) },
		"start":     func() error { return c.StartNode(callCtx, n) },
		"partition": func() error { return c.Partition(n) },
		"heal":      func() error { return c.Heal(n) },
		"pause":     func() error { return c.Pause(n) },
		"resume":    func() error { return c.Resume(n) },
	}
	f, ok := faults[args[0]]
	if !ok {
		fmt.Printf("unknown command %q\n", args[0])
		return false
	}
	if err := f(); err != nil {
		fmt.Println(err)
	}
	return false
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
