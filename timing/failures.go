package timing

import "time"

// Gaps between the reports of a run of failures: the first failure is reported at once, the
// next FirstReportGap later, each gap after that twice the one before, up to MaxReportGap.
const (
	FirstReportGap = 5 * time.Second
	MaxReportGap   = time.Minute
)

// Failures is a run of failures of one activity — a campaign, a store that does not answer —
// and the rule of when to report it, so that a process that keeps failing says so at a bounded
// rate instead of once and then never again: the first failure at once, then after 5 s, 10 s,
// 20 s and 40 s, then once a minute, each report with the count and the last cause. The zero
// value is an activity that has not failed. It is not safe for concurrent use.
type Failures struct {
	count int
	since time.Time
	next  time.Time
	gap   time.Duration
	last  error
}

// Fail records a failure at now and reports whether it is time to report the run.
func (f *Failures) Fail(now time.Time, err error) bool {
	f.count++
	f.last = err
	if f.count == 1 {
		f.since, f.gap, f.next = now, FirstReportGap, now.Add(FirstReportGap)
		return true
	}
	if now.Before(f.next) {
		return false
	}
	f.gap = min(2*f.gap, MaxReportGap)
	f.next = now.Add(f.gap)
	return true
}

// Succeed ends the run and returns how many failures it held (0 when there was none).
func (f *Failures) Succeed() int {
	n := f.count
	*f = Failures{}
	return n
}

// Count is the number of failures in the run (0: not failing).
func (f *Failures) Count() int { return f.count }

// Since is when the run's first failure happened.
func (f *Failures) Since() time.Time { return f.since }

// Last is the run's latest failure.
func (f *Failures) Last() error { return f.last }
