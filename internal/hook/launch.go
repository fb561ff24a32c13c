package hook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
)

// The launcher's fast path (hooks/launch). sh's read builtin reads a file one byte per system
// call, so comparing a binary's stamp with the plugin's release/checksums.txt in the shell
// cost each hook about 0.2 ms, more than Cairn's own work. Where the binaries say they check
// themselves (SelfCheckFile beside them, written with them by make build and hooks/install),
// the launcher execs the hook at once and names the two places in EnvLaunchRoot and
// EnvLaunchBin; runHook compares the files before reading stdin and, when they differ, runs the
// launcher again with EnvLaunchVerify set, which then checks, and installs, as it always did.
// Binaries from before this have no SelfCheckFile and get the launcher's own check.
const (
	EnvLaunchRoot   = "CAIRN_LAUNCH_ROOT"   // the plugin root: release/checksums.txt, hooks/launch
	EnvLaunchBin    = "CAIRN_LAUNCH_BIN"    // the directory of this binary and its .checksums
	EnvLaunchVerify = "CAIRN_LAUNCH_VERIFY" // set when handing back: the launcher checks itself
	SelfCheckFile   = ".self-check"
)

// staleLaunch reports whether the launcher left the stamp check to this process and the
// binary's stamp (EnvLaunchBin/.checksums) differs from the plugin's checksums; root is the
// plugin root to hand back to.
func staleLaunch(getenv func(string) string) (root string, stale bool) {
	dir := getenv(EnvLaunchBin)
	if dir == "" {
		return "", false
	}
	root = getenv(EnvLaunchRoot)
	// A file that cannot be read is empty, as the launcher reads it.
	plugin, _ := durable.ReadPath(filepath.Join(root, "release", "checksums.txt"), 1<<20, true)
	own, _ := durable.ReadPath(filepath.Join(dir, ".checksums"), 1<<20, true)
	return root, root == "" || !engine.SameStamp(plugin, own)
}

// handBack runs the launcher again (name: this hook's binary), with the check left to it. It
// returns only when the launcher could not be run.
func handBack(name, root string) error {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, EnvLaunchRoot+"=") || strings.HasPrefix(kv, EnvLaunchBin+"=")
	})
	launch := filepath.Join(root, "hooks", "launch")
	if _, err := os.Stat(launch); err != nil {
		return err
	}
	return execLauncher(launch, name, append(env, EnvLaunchVerify+"=1"))
}
