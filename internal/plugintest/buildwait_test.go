package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// While another start builds the binaries with Go (minutes: a checkout after git pull, where
// no release has its sources), a hook waited on the install lock as for a download, until its
// clock said 6 s were spent: each Stop at the end of a turn, each task event, and a session's
// start during the build (which holds the first request) took 6 s more, to say at the end that
// another start was installing. A hook does not wait on a build: it says so at once.
func TestLaunchHookDoesNotWaitOnABuild(t *testing.T) {
	skipOnWindows(t)
	root := copyPlugin(t, launcherFiles...)
	fakeSums(t, root) // no release to download: the MCP server builds
	work, _, data := launchSite(t)
	started, release := filepath.Join(work, "build-started"), filepath.Join(work, "build-may-end")
	builder := toolDir(t)
	fakeGo(t, builder, `: >`+started+`
while [ ! -e `+release+` ]; do sleep 0.2; done
printf '#!/bin/sh\necho ran built\n' >"$out" && chmod +x "$out"
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server := exec.CommandContext(ctx, filepath.Join(root, "hooks", "launch"), "cairn-mcp")
	server.Env, server.Dir, server.Stdin = launchEnv(root, data, work, builder), work, strings.NewReader(initializeLine)
	var out bytes.Buffer
	server.Stdout, server.Stderr = &out, &out
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		writeFile(t, release, "")
		if err := server.Wait(); err != nil || !strings.Contains(out.String(), "ran built") {
			t.Errorf("the MCP server's build: %v: %s", err, out.String())
		}
	}()
	if !waitFile(ctx, started) {
		t.Fatalf("the MCP server started no build: %s", out.String())
	}
	tools := toolDir(t)
	fastClock(t, tools)
	env := launchEnv(root, data, work, tools)
	rounds := lockWaitRounds(t, env)
	res := runShell(t, hookCommand(t, "Stop"), env, work, `{"session_id":"s","stop_hook_active":false}`)
	var said map[string]string
	if n := rounds(); res.code != 0 || json.Unmarshal([]byte(res.stdout), &said) != nil ||
		!strings.Contains(said["systemMessage"], "being installed by another start") || n != 0 {
		t.Errorf("Stop during a build = %+v after %d rounds of waiting on the lock, want exit 0, a systemMessage saying another start is installing, and no wait", res, n)
	}
}
