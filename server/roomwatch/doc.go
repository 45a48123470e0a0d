// Package roomwatch shares store reads between the watch streams of the elections API
// (GET /elections/{id}/watch): one loop per shard with watched rooms, however many rooms and
// streams it has, within per-client and global limits on the streams.
package roomwatch
