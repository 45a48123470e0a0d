// Package scenario holds the deployer's end-to-end tests (no code of its own): `deployer
// deploy` and `deployer remove` run as the binary runs them, against a real registry in
// process on loopback and the portainertest fake, which deploys for real on the test Swarm.
package scenario
