//go:build unix && !darwin

package filestore

// sync makes the file's data and metadata durable (fsync(2)).
func (f rawFile) sync() error { return fsync(f) }
