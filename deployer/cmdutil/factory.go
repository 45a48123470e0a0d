// Package cmdutil is the program skeleton of the repository's tools, the deployer and release:
// what every command gets from its parent (the I/O streams, the repository's git, the clock),
// the root command's wiring, the exit codes and main (Main).
package cmdutil

import (
	"fmt"
	"io"
	"time"

	"github.com/regbo/lfp-swarm-lease/deployer/gitrun"
)

// IOStreams are a command's input and output: data to Out, progress and warnings to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Factory is the dependencies the root command hands to each command.
type Factory struct {
	// IO is the process's standard streams in the binary and buffers in tests.
	IO IOStreams
	// Dir is the repository's work tree; "" when the tool runs outside one (see RepoErr).
	Dir string
	// RepoErr says why Dir is empty: no git work tree around the working directory. Only the
	// commands that need the repository's files or its git fail with it (see NeedRepository);
	// help and the others (the deployer's version and remove) work anywhere.
	RepoErr error
	// Git runs git in Dir (nil outside a work tree).
	Git gitrun.Runner
	// Now is the clock.
	Now func() time.Time
}

// NeedRepository is nil inside the repository's work tree, and otherwise the error of the
// command name, which needs it.
func (f *Factory) NeedRepository(name string) error {
	if f.RepoErr == nil {
		return nil
	}
	return fmt.Errorf("%s works on the repository: run it inside the repository's work tree (%w)", name, f.RepoErr)
}
