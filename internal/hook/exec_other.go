//go:build !unix

package hook

import (
	"errors"
	"os"
	"os/exec"
)

// execInPlace runs path with this process's stdin, stdout and stderr and exits with its
// status: without exec(2) (Windows) that is the nearest to replacing the process. It returns
// only when path could not be started.
func execInPlace(path string, argv, env []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err == nil || errors.As(err, &exit) {
		os.Exit(cmd.ProcessState.ExitCode())
	}
	return err
}
