//go:build !linux

package filestore

// syncData makes f's data durable (fsync(2) where fdatasync(2) is not available).
func syncData(f rawFile) error { return f.sync() }

// syncBatch makes the data of every file of the batch durable: one fsync(2) each, since no
// call here flushes several files at once. It returns the calls made and the first error.
func syncBatch(batch []*flushRequest) (calls int, err error) {
	for _, r := range batch {
		if serr := syncData(r.f); serr != nil && err == nil {
			err = serr
		}
	}
	return len(batch), err
}
