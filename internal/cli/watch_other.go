//go:build !unix

package cli

import "io"

// readerGone: only unix says, without a write, that a pipe's reader has gone.
func readerGone(io.Writer) func() bool { return nil }
