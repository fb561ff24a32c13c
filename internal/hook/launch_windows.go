//go:build windows

package hook

import (
	"os"
	"os/exec"
)

// execLauncher runs sh with the launcher and this process's stdio (stdin is still unread) and
// exits with its code: Windows has no exec.
func execLauncher(launch, name string, env []string) error {
	cmd := exec.Command("sh", launch, name)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		return err
	}
	os.Exit(0)
	return nil
}
