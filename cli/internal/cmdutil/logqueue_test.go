package cmdutil

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestLogQueueNeverWaitsForTheReader: with a stream nobody reads, every log line returns at
// once; what does not fit in the queue is dropped and counted, and once the stream is read
// again the lines kept arrive in order, followed by a line of the log's own format that says
// how many were dropped.
func TestLogQueueNeverWaitsForTheReader(t *testing.T) {
	r, w := io.Pipe() // a write blocks until it is read: a reader that stopped
	q := NewLogQueue(w)
	defer q.Close(time.Second)
	log, err := LogOptions{Format: "text"}.Logger(q)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	RegisterLogDrops(reg, q)

	const lines = 3 * logQueueLines
	done := make(chan struct{})
	go func() {
		for i := 0; i < lines; i++ {
			log.Info("line", "n", i)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("logging waited for a reader that does not read")
	}
	dropped := q.Dropped()
	// One line may be in the writer's hands, blocked in the pipe, beside a full queue.
	if kept := lines - int(dropped); kept < logQueueLines || kept > logQueueLines+1 {
		t.Fatalf("kept %d lines of %d (dropped %d), want the queue's %d (+1 being written)", kept, lines, dropped, logQueueLines)
	}
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || families[0].GetName() != "lfp_swarm_lease_log_lines_dropped_total" {
		t.Fatalf("registered metrics %v (%v), want log_lines_dropped_total alone", families, err)
	}
	if got := families[0].GetMetric()[0].GetCounter().GetValue(); got != float64(dropped) {
		t.Fatalf("log_lines_dropped_total = %v, want %d", got, dropped)
	}

	sc := bufio.NewScanner(r)
	last := -1
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "log lines dropped") {
			if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "dropped_total=") {
				t.Fatalf("the drop notice is not a line of the log: %q", line)
			}
			return
		}
		_, nText, _ := strings.Cut(line, " n=")
		n, err := strconv.Atoi(nText)
		if err != nil {
			t.Fatalf("unexpected line %q", line)
		}
		if n <= last {
			t.Fatalf("line %d after line %d", n, last)
		}
		last = n
	}
	t.Fatal("no notice of the dropped lines")
}

// TestLogQueueCloseDoesNotWaitForever: Close gives a stream that takes nothing its timeout,
// then returns.
func TestLogQueueCloseDoesNotWaitForever(t *testing.T) {
	_, w := io.Pipe()
	q := NewLogQueue(w)
	_, _ = q.Write([]byte("never read\n"))
	_, _ = q.Write([]byte("never read either\n"))
	began := time.Now()
	q.Close(100 * time.Millisecond)
	if took := time.Since(began); took > time.Second {
		t.Fatalf("Close took %v with a stream that takes nothing", took)
	}
}
