package e2e

// Benchmarks of the elections API, recorded in BENCHMARKS.md ("Elections API"):
//
//   - BenchmarkElectionsThroughput/store={memory,file,swarm}: electionsClients concurrent
//     clients over loopback HTTP against one real `lfp-swarm-lease serve` process. Each client
//     owns a room and repeats the cycle campaign (wins a new term) → renew → renew → resign:
//     every request changes state (one write each). One iteration is one request; it reports
//     ops/s and the p50/p99 latency of each operation. The admission budget and the active-room
//     limit are off (every client is 127.0.0.1).
//   - BenchmarkElectionsRSS/rooms={1000,10000}/store={memory,file}: the serve process's VmRSS
//     after that many rooms each have a live leader (campaigns by 64 clients, TTL 300 s), next
//     to its VmRSS before the first campaign.
//
// The load generator is this benchmark process, on the same two vCPUs as the server; the
// throughput benchmark reports the CPU time per request of both (server-cpu-us/op,
// client-cpu-us/op), which bounds what two cores can do: 2 s / (server + client) per second.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
)

// electionsClients is the number of concurrent clients of the throughput benchmark.
const electionsClients = 64

// electionsStore is a store for a serve process: its settings.
type electionsStore struct {
	name string
	env  func(testing.TB) []string
}

var electionsStores = []electionsStore{
	{"memory", func(testing.TB) []string { return []string{"SWARM_LEASE_STORE=memory"} }},
	{"file", func(tb testing.TB) []string { return []string{"SWARM_LEASE_STORE=file://" + tb.TempDir()} }},
	{"swarm", func(tb testing.TB) []string {
		return []string{"SWARM_LEASE_STORE=swarm", "DOCKER_HOST=" + leasetest.SwarmHost(tb)}
	}},
}

// startElectionsServe starts serve on st with the limits off and its rooms in a fresh
// namespace, whose Swarm shards are removed at the end.
func startElectionsServe(b *testing.B, st electionsStore) *sseServeProc {
	ns := leasetest.Namespace(b)
	storeEnv := st.env(b)
	env := append([]string{"SWARM_LEASE_LISTEN=127.0.0.1:0", "SWARM_LEASE_NAMESPACE=" + ns,
		"SWARM_LEASE_ELECTIONS_NAMESPACE=" + ns, "SWARM_LEASE_ADMISSION_PER_MINUTE=0", "SWARM_LEASE_MAX_ACTIVE_ROOMS=0",
		"GOMAXPROCS=" + strconv.Itoa(runtime.NumCPU())}, storeEnv...)
	if st.name == "swarm" {
		b.Cleanup(func() { removeRoomShards(b, envValue(storeEnv, "DOCKER_HOST"), ns) })
	}
	return sseStartServe(b, env)
}

// removeRoomShards removes the shard services of rooms namespace ns on the Swarm at host.
func removeRoomShards(tb testing.TB, host, ns string) {
	args := []string{"-H", host, "service", "rm"}
	for i := range rooms.DefaultShards {
		args = append(args, swarmstore.RoomsShardName(ns, i))
	}
	// Shards never written do not exist: docker reports them and removes the others.
	_ = exec.Command("docker", args...).Run()
}

// BenchmarkElectionsThroughput: see the file comment. Goals: memory ≥ 20,000 ops/s, file ≥
// 5,000 ops/s, Swarm ≥ 100 state-changing ops/s.
func BenchmarkElectionsThroughput(b *testing.B) {
	for _, st := range electionsStores {
		b.Run("store="+st.name, func(b *testing.B) { benchElectionsThroughput(b, st) })
	}
}

func benchElectionsThroughput(b *testing.B, st electionsStore) {
	srv := startElectionsServe(b, st)
	ops := []string{"campaign", "renew", "renew", "resign"}
	lat := make([][][]time.Duration, electionsClients) // client → op index in the cycle → latencies
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	serverCPU, selfCPU := sseProcCPU(b, srv.cmd.Process.Pid), sseProcCPU(b, os.Getpid())
	start := time.Now()
	for i := range electionsClients {
		lat[i] = make([][]time.Duration, len(ops))
		conn, err := dialRawHTTP(strings.TrimPrefix(srv.base, "http://"))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		wg.Go(func() {
			room := fmt.Sprintf("bench-%s-%03d", st.name, i)
			campaign := []byte(`{"candidate_id":"c` + strconv.Itoa(i) + `","ttl_seconds":30}`)
			var token string
			for step := 0; next.Add(1) <= int64(b.N); step++ {
				k := step % len(ops)
				var body []byte
				switch ops[k] {
				case "campaign":
					body = campaign
				case "renew":
					body = []byte(`{"leader_token":"` + token + `","ttl_seconds":30}`)
				case "resign":
					body = []byte(`{"leader_token":"` + token + `"}`)
				}
				t0 := time.Now()
				answer, err := conn.post("/elections/"+room+"/"+ops[k], body)
				lat[i][k] = append(lat[i][k], time.Since(t0))
				if err == nil && ops[k] == "campaign" {
					token = jsonString(answer, "leader_token")
					if token == "" {
						err = fmt.Errorf("campaign in %s: not leader: %s", room, answer)
					}
				}
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	serverCPU, selfCPU = sseProcCPU(b, srv.cmd.Process.Pid)-serverCPU, sseProcCPU(b, os.Getpid())-selfCPU
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	// CPU per request of the server process and of this load generator (user + system).
	b.ReportMetric(float64(serverCPU.Microseconds())/float64(b.N), "server-cpu-us/op")
	b.ReportMetric(float64(selfCPU.Microseconds())/float64(b.N), "client-cpu-us/op")
	byOp := map[string][]time.Duration{}
	var all []time.Duration
	for _, perClient := range lat {
		for k, ds := range perClient {
			byOp[ops[k]] = append(byOp[ops[k]], ds...)
			all = append(all, ds...)
		}
	}
	sseReportPercentiles(b, all, "all-")
	for _, op := range []string{"campaign", "renew", "resign"} {
		sseReportPercentiles(b, byOp[op], op+"-")
	}
}

// BenchmarkElectionsRSS: see the file comment.
func BenchmarkElectionsRSS(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, st := range electionsStores[:2] {
			b.Run(fmt.Sprintf("rooms=%d/store=%s", n, st.name), func(b *testing.B) {
				for range b.N {
					benchElectionsRSS(b, st, n)
				}
			})
		}
	}
}

func benchElectionsRSS(b *testing.B, st electionsStore, rooms int) {
	srv := startElectionsServe(b, st)
	base := sseProcMem(b, srv.cmd.Process.Pid)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range electionsClients {
		conn, err := dialRawHTTP(strings.TrimPrefix(srv.base, "http://"))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(rooms) {
					return
				}
				body := []byte(`{"candidate_id":"worker-` + strconv.FormatInt(i, 10) + `","ttl_seconds":300,"metadata":"host-` + strconv.FormatInt(i, 10) + `"}`)
				answer, err := conn.post(fmt.Sprintf("/elections/rss-room-%06d/campaign", i), body)
				if err == nil && jsonString(answer, "status") != "leader" {
					err = fmt.Errorf("not leader: %s", answer)
				}
				if err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("campaign %d: %w", i, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	loaded := sseProcMem(b, srv.cmd.Process.Pid)
	b.ReportMetric(base.rssMB(), "base-rss-MB")
	b.ReportMetric(loaded.rssMB(), "rss-MB")
	b.ReportMetric(loaded.hwmMB(), "hwm-MB")
	b.Logf("%d live rooms on %s: before %v; after %v", rooms, st.name, base, loaded)
}

// rawHTTP is one keep-alive HTTP/1.1 connection that sends prepared requests and reads the
// answers with a minimal parser: the throughput benchmark's load generator measures the
// server, and net/http's client costs as much CPU per request as the server does (measured:
// 108 µs of client CPU against 140 µs of server CPU per request on the memory store).
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

func (c *rawHTTP) Close() error { return c.conn.Close() }

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
	length, chunked := -1, false
	for {
		line, err := c.rd.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, err = strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil {
				return nil, err
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = true
		}
	}
	var answer []byte
	switch {
	case length >= 0:
		answer = make([]byte, length)
		if _, err := io.ReadFull(c.rd, answer); err != nil {
			return nil, err
		}
	case chunked:
		for {
			line, err := c.rd.ReadString('\n')
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
			if err != nil {
				return nil, err
			}
			chunk := make([]byte, n+2) // data and its CRLF
			if _, err := io.ReadFull(c.rd, chunk); err != nil {
				return nil, err
			}
			if n == 0 {
				break
			}
			answer = append(answer, chunk[:n]...)
		}
	default:
		return nil, fmt.Errorf("POST %s: an answer without a length", path)
	}
	if !ok {
		return nil, fmt.Errorf("POST %s: %s%s", path, bytes.TrimSpace(status), answer)
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
	return string(value)
}
