// Package admission is the elections API's admission control: a budget of room creations and
// campaigns per client and minute, so that one client cannot create rooms or campaign without
// bound. Status, renewals and resignations are exempt (the API does not ask), so that load can
// never strand a current leader.
package admission
