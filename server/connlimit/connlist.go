package connlimit

// connList is a list of waiting connections linked through the connections themselves: a
// connection waits again after every request it serves, and a container/list would allocate an
// element for each time, in both queues it waits in.
type connList struct {
	head, tail *trackedConn
	// link is which of the connections' links this list uses.
	link connLinkKind
}

// connLinkKind names a connection's place in one of the two kinds of queue it waits in.
type connLinkKind uint8

const (
	limiterLink connLinkKind = iota // Limiter.waiting
	clientLink                      // Limiter.byAddr[client]
	connLinks
)

// connLink is a connection's place in one list.
type connLink struct {
	prev, next *trackedConn
	queued     bool
}

func (q *connList) front() *trackedConn { return q.head }

func (q *connList) back() *trackedConn { return q.tail }

// next is the connection after c in q, or nil.
func (q *connList) next(c *trackedConn) *trackedConn { return c.links[q.link].next }

// pushBack appends c, which is in no list of q's kind.
func (q *connList) pushBack(c *trackedConn) {
	lk := &c.links[q.link]
	*lk = connLink{prev: q.tail, queued: true}
	if q.tail != nil {
		q.tail.links[q.link].next = c
	} else {
		q.head = c
	}
	q.tail = c
}

// remove takes c, which is in q, out of it.
func (q *connList) remove(c *trackedConn) {
	lk := &c.links[q.link]
	if lk.prev != nil {
		lk.prev.links[q.link].next = lk.next
	} else {
		q.head = lk.next
	}
	if lk.next != nil {
		lk.next.links[q.link].prev = lk.prev
	} else {
		q.tail = lk.prev
	}
	*lk = connLink{}
}
