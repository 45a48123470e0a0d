// Package cmdutil holds what every deployer command gets from its parent: the I/O streams, the
// repository's git, the clock.
package cmdutil

import (
	"io"
	"time"

	"github.com/regbo/lfp-swarm-lease/deployer/internal/gitrun"
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
	// Dir is the repository's work tree.
	Dir string
	// Git runs git in Dir.
	Git gitrun.Runner
	// Now is the clock.
	Now func() time.Time
}
