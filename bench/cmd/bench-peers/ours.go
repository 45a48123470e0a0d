package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The two stores of ours, each a real `serve` process with its default settings but for the
// admission budget, which would refuse a benchmark whose clients all come from 127.0.0.1.
var (
	fileTarget   = target{name: "file", start: startServe("file")}
	memoryTarget = target{name: "memory", start: startServe("memory")}
)

var listening = regexp.MustCompile(`msg=listening addr=(\S+)`)

func startServe(store string) func(ctx context.Context, c config, dir string, counting bool) (*running, error) {
	return func(ctx context.Context, c config, dir string, counting bool) (*running, error) {
		storeURL := "memory"
		if store == "file" {
			storeURL = "file://" + dir
		}
		p, err := startProc(c, dir, counting, c.serve, []string{"serve"}, append([]string{
			"SWARM_LEASE_STORE=" + storeURL, "SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_ADMISSION_PER_MINUTE=0",
			"HOSTNAME=bench-peers"}, c.serveEnv...))
		if err != nil {
			return nil, err
		}
		addr, err := p.waitLog(ctx, "listen address", func(out string) string {
			if m := listening.FindStringSubmatch(out); m != nil {
				return m[1]
			}
			return ""
		})
		if err != nil {
			_ = p.stop()
			return nil, fmt.Errorf("serve: %w", err)
		}
		return &running{proc: p, load: func(ctx context.Context, clients, ops int) (measurement, error) {
			return drive(ctx, []*proc{p}, clients, ops, func(i int) (client, error) { return dialRoom(addr, store, i) })
		}}, nil
	}
}

// roomClient is one client of the elections API on its own keep-alive connection.
type roomClient struct {
	conn     *rawHTTP
	room     string
	campaign []byte
	token    string
}

func dialRoom(addr, store string, i int) (client, error) {
	conn, err := dialRawHTTP(addr)
	if err != nil {
		return nil, err
	}
	return &roomClient{conn: conn, room: fmt.Sprintf("bench-%s-%03d", store, i),
		campaign: []byte(`{"candidate_id":"c` + strconv.Itoa(i) + `","ttl_seconds":30}`)}, nil
}

func (c *roomClient) do(_ context.Context, k int) error {
	var body []byte
	switch cycleOps[k] {
	case "campaign":
		body = c.campaign
	case "renew":
		body = []byte(`{"leader_token":"` + c.token + `","ttl_seconds":30}`)
	case "resign":
		body = []byte(`{"leader_token":"` + c.token + `"}`)
	}
	answer, err := c.conn.post("/elections/"+c.room+"/"+cycleOps[k], body)
	if err == nil && cycleOps[k] == "campaign" {
		if c.token = jsonString(answer, "leader_token"); c.token == "" {
			err = fmt.Errorf("campaign in %s: not leader: %s", c.room, answer)
		}
	}
	return err
}

func (c *roomClient) close() { _ = c.conn.conn.Close() }

// rawHTTP is one keep-alive HTTP/1.1 connection with a minimal writer and parser: the load
// generator runs on the same cores as the server, and net/http's client costs about as much
// CPU per request as the server (BENCHMARKS.md, "Elections API"). It reads Content-Length
// answers only, which is what the elections API sends.
type rawHTTP struct {
	conn net.Conn
	rd   *bufio.Reader
	host string
	buf  []byte
}

func dialRawHTTP(hostport string) (*rawHTTP, error) {
	conn, err := net.Dial("tcp", hostport)
	if err != nil {
		return nil, err
	}
	return &rawHTTP{conn: conn, rd: bufio.NewReaderSize(conn, 16<<10), host: hostport}, nil
}

// post sends a JSON body to path and returns the body of a 200 answer.
func (c *rawHTTP) post(path string, body []byte) ([]byte, error) {
	c.buf = fmt.Appendf(c.buf[:0], "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		path, c.host, len(body))
	c.buf = append(c.buf, body...)
	if _, err := c.conn.Write(c.buf); err != nil {
		return nil, err
	}
	status, err := c.rd.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	ok := bytes.HasPrefix(status, []byte("HTTP/1.1 200 "))
	status = bytes.Clone(bytes.TrimSpace(status))
	length := -1
	for {
		line, err := c.rd.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		if name, value, _ := bytes.Cut(line, []byte(":")); bytes.EqualFold(name, []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return nil, err
			}
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("POST %s: an answer without Content-Length", path)
	}
	answer := make([]byte, length)
	if _, err := io.ReadFull(c.rd, answer); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("POST %s: %s %s", path, status, answer)
	}
	return answer, nil
}

// jsonString returns the string value of "field" in a flat JSON object, "" when absent.
func jsonString(doc []byte, field string) string {
	_, rest, found := bytes.Cut(doc, []byte(`"`+field+`":"`))
	if !found {
		return ""
	}
	value, _, _ := bytes.Cut(rest, []byte(`"`))
	return strings.Clone(string(value))
}

// roomsEtcdTarget is the elections API on etcd: -serve-replicas serve processes (default
// settings but the admission budget) on one etcd cluster of -etcd-members members, the clients
// spread over the replicas (client i on replica i mod replicas), as behind a load balancer.
var roomsEtcdTarget = target{name: "rooms-etcd", start: startRoomsEtcd}

func startRoomsEtcd(ctx context.Context, c config, dir string, counting bool) (*running, error) {
	if counting {
		return nil, fmt.Errorf("flushes are not counted for rooms-etcd (several processes)")
	}
	members, endpoints, err := startEtcdCluster(ctx, c, dir, false)
	if err != nil {
		return nil, err
	}
	replicas, addrs, err := startServeReplicas(ctx, c, dir, endpoints, max(c.serveReplicas, 1))
	if err != nil {
		stopAll(members)
		return nil, err
	}
	all := append(slices.Clone(replicas), members...)
	return &running{proc: all[0], others: all[1:], load: func(ctx context.Context, clients, ops int) (measurement, error) {
		before := storeRequests(addrs)
		m, err := drive(ctx, all, clients, ops, func(i int) (client, error) { return dialRoom(addrs[i%len(addrs)], "etcd", i) })
		if err == nil {
			after := storeRequests(addrs)
			var parts []string
			for _, op := range slices.Sorted(maps.Keys(after)) {
				d := after[op].sub(before[op])
				parts = append(parts, fmt.Sprintf("%s %.2f (mean %.2f ms)", op, d.count/float64(m.ops), 1000*d.sum/max(d.count, 1)))
			}
			fmt.Fprintf(os.Stderr, "rooms-etcd: etcd requests per operation (serve's lfp_swarm_lease_store_request_duration_seconds): %s\n", strings.Join(parts, ", "))
		}
		return m, err
	}}, nil
}

// requestTotals are a histogram's count and sum.
type requestTotals struct{ count, sum float64 }

func (a requestTotals) sub(b requestTotals) requestTotals {
	return requestTotals{a.count - b.count, a.sum - b.sum}
}

// storeRequests sums the store request histogram of the replicas at addrs by op, from their
// /metrics (nothing for a replica that does not answer).
func storeRequests(addrs []string) map[string]requestTotals {
	out := map[string]requestTotals{}
	for _, addr := range addrs {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for line := range strings.Lines(string(body)) {
			for suffix, count := range map[string]bool{"_count{": true, "_sum{": false} {
				rest, ok := strings.CutPrefix(line, "lfp_swarm_lease_store_request_duration_seconds"+suffix)
				if !ok {
					continue
				}
				_, op, _ := strings.Cut(rest, `op="`)
				op, _, _ = strings.Cut(op, `"`)
				f := strings.Fields(rest)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil {
					continue
				}
				t := out[op]
				if count {
					t.count += v
				} else {
					t.sum += v
				}
				out[op] = t
			}
		}
	}
	return out
}

// startServeReplicas starts n serve processes on the etcd cluster at endpoints (URLs) and
// returns them with their listen addresses.
func startServeReplicas(ctx context.Context, c config, dir string, endpoints []string, n int) ([]*proc, []string, error) {
	hosts := make([]string, len(endpoints))
	for i, ep := range endpoints {
		hosts[i] = strings.TrimPrefix(ep, "http://")
	}
	var ps []*proc
	var addrs []string
	for range n {
		p, err := startProc(c, dir, false, c.serve, []string{"serve"}, append([]string{
			"SWARM_LEASE_STORE=etcd://" + strings.Join(hosts, ",") + "/bench", "SWARM_LEASE_LISTEN=127.0.0.1:0",
			"SWARM_LEASE_ADMISSION_PER_MINUTE=0", "HOSTNAME=bench-peers"}, c.serveEnv...))
		if err != nil {
			stopAll(ps)
			return nil, nil, err
		}
		ps = append(ps, p)
		addr, err := p.waitLog(ctx, "listen address", func(out string) string {
			if m := listening.FindStringSubmatch(out); m != nil {
				return m[1]
			}
			return ""
		})
		if err != nil {
			stopAll(ps)
			return nil, nil, fmt.Errorf("serve: %w", err)
		}
		addrs = append(addrs, addr)
	}
	return ps, addrs, nil
}
