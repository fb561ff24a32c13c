//go:build !unix

package gitremote

import "os/exec"

// detach does nothing where there are no sessions or process groups: cancelling kills git.
func detach(*exec.Cmd) (waited func()) { return func() {} }
