//go:build unix

package plugintest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO where the launcher reads a file (the plugin's checksums, plugin.json or install, a
// set's stamp, the install's record of what each session was shown) hung the hook, the MCP
// server and cairn: the shell's redirect opens it for reading and waits for a writer that
// never comes, past Claude Code's deadline. It is read as a file that is not there.
func TestLaunchReadsNoFIFO(t *testing.T) {
	skipOnWindows(t)
	tools := toolDir(t)
	if p, err := exec.LookPath("cksum"); err == nil {
		if err := os.Symlink(p, filepath.Join(tools, "cksum")); err != nil {
			t.Fatal(err)
		}
	}
	for _, fifo := range []string{"@root/release/checksums.txt", "@root/.claude-plugin/plugin.json", "@root/hooks/install",
		"@set/.checksums", "@set/.built-from", "@data/.install-said", "@data/.download-failed-@version"} {
		t.Run(fifo, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			data := filepath.Join(work, "data")
			set := filepath.Join(data, "bin-"+pluginVersion(t))
			if strings.HasPrefix(fifo, "@set") {
				fakeBinaries(t, set) // else none: the launcher goes on to install
				stamp(t, root, set)
			}
			if err := os.MkdirAll(data, 0o755); err != nil {
				t.Fatal(err)
			}
			p := strings.NewReplacer("@root", root, "@set", set, "@data", data, "@version", pluginVersion(t)).Replace(fifo)
			_ = os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			env := launchEnv(root, data, work, tools, "CLAUDE_CODE_SESSION_ID=s1")
			for _, name := range []string{"cairn", "cairn-stop"} {
				// The bound only turns the hang into a failure: nothing here waits on a clock. A
				// hang is ended with the processes it started (one blocked on the FIFO holds
				// the output open).
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				c := exec.CommandContext(ctx, filepath.Join(root, "hooks", "launch"), name)
				c.Env, c.Dir, c.Stdin = env, work, strings.NewReader(`{"session_id":"s1"}`)
				c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
				c.WaitDelay = time.Second
				out, _ := c.CombinedOutput()
				if ctx.Err() != nil {
					t.Errorf("launch %s with a FIFO at %s hangs: %s", name, fifo, out)
				}
				cancel()
			}
		})
	}
}

// A set for another processor whose exec fails again (cairn_ran) kept that failure at the data
// directory's .download-failed-VERSION by writing into it: a FIFO there hung the hook and the
// MCP server, past Claude Code's deadline. A record that is no file is not written.
func TestLaunchForeignSetWritesNoFIFO(t *testing.T) {
	root := copyPlugin(t, launcherFiles...)
	fakeSums(t, root)
	work, _, pdata := launchSite(t)
	foreignSet(t, root, filepath.Join(pdata, "bin-"+pluginVersion(t)))
	if err := syscall.Mkfifo(filepath.Join(pdata, ".download-failed-"+pluginVersion(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_LAUNCH_RAN= data")
	// The bound only turns the hang into a failure: nothing here waits on a clock.
	res, _ := runBounded(t, 20*time.Second, env, work, `{"session_id":"s"}`, filepath.Join(root, "hooks", "launch"), "cairn-stop")
	if res.code != 0 || !strings.Contains(res.stderr, "cannot run on this machine") {
		t.Errorf("Stop hook over another processor's set with a FIFO at its failure record = %+v, want exit 0 and a line saying the set cannot run", res)
	}
}

// A FIFO at the data directory's build-VERSION.log hung the hook (sed read its last line) and
// the MCP server (the build's ': >LOG' waited for a reader, holding the install lock). It is
// said as a log the build cannot write, and go does not run.
func TestLaunchBuildLogIsNoFIFO(t *testing.T) {
	root := copyPlugin(t, launcherFiles...)
	work, _, data := launchSite(t)
	log := filepath.Join(data, "build-"+pluginVersion(t)+".log")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(log, 0o600); err != nil {
		t.Fatal(err)
	}
	tools := toolDir(t)
	calls := goThatFails(t, tools, work)
	env := launchEnv(root, data, work, tools)
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		args := []string{filepath.Join(root, "hooks", "launch"), name}
		if name == "cairn-session-start" {
			args = []string{"/bin/sh", "-c", hookCommand(t, "SessionStart")}
		}
		// The bound only turns the hang into a failure: nothing here waits on a clock.
		res, _ := runBounded(t, 20*time.Second, env, work, initializeLine, args[0], args[1:]...)
		if res.code != launchFailCode(name) || !strings.Contains(res.stderr, "cannot write its log, "+log+": make it a writable file") {
			t.Errorf("%s over a FIFO at its build log: %+v, want exit %d and a line: cannot write %s ... make it a writable file", name, res, launchFailCode(name), log)
		}
	}
	if b, err := os.ReadFile(calls); err == nil {
		t.Errorf("go ran over a FIFO at its build log: %s", b)
	}
}

// A hook's install, left to a process of its own (cairn_handoff), keeps why it failed in the
// data directory's .download-failed-VERSION, where the hook reads it: with a FIFO or a
// directory there nothing was kept, and the hook said only that installing the archive failed,
// not that it was refused, and why. What is no file goes where it can without being opened.
func TestLaunchHookSaysWhyOverARecordThatIsNoFile(t *testing.T) {
	skipOnWindows(t)
	root, archive, data := releasedPlugin(t)
	fakeSums(t, root)
	rs := serveRelease(t, map[string][]byte{archive: data})
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		// Not the launcher's to empty: it stays whole, and the failure is kept beside it.
		{"a directory with a file", func(p string) error { return os.MkdirAll(filepath.Join(p, "mine"), 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, _, pdata := launchSite(t)
			if err := os.MkdirAll(pdata, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(filepath.Join(pdata, ".download-failed-"+pluginVersion(t))); err != nil {
				t.Fatal(err)
			}
			tools := toolDir(t)
			stoppedClock(t, tools) // the hook waits for its install to the end
			env := launchEnv(root, pdata, work, tools, "CAIRN_DOWNLOAD_URL="+rs.URL)
			// The bound only turns a hang into a failure: nothing here waits on a clock.
			res, _ := runBounded(t, time.Minute, env, work, `{"session_id":"s"}`, "/bin/sh", "-c", hookCommand(t, "SessionStart"))
			if res.code != 0 || !strings.Contains(res.stdout, "refused the downloaded "+archive+": its sha256 does not match") {
				t.Errorf("SessionStart over %s at the failure record = %+v, want exit 0 and the line saying the archive was refused", tc.name, res)
			}
			if mine := filepath.Join(pdata, ".download-failed-"+pluginVersion(t), "mine"); strings.HasSuffix(tc.name, "file") {
				if _, err := os.Stat(mine); err != nil {
					t.Errorf("%s was removed: %v", mine, err)
				}
			}
		})
	}
}

// A relative CLAUDE_PLUGIN_ROOT (a user's; Claude Code gives an absolute one) with a leading
// dash was taken for an option where the launcher loads its install (". -p/hooks/install":
// "Illegal option"), and the start said the plugin's directory was incomplete. It is the working
// directory's, named whole, as a relative CLAUDE_PLUGIN_DATA is: the install runs.
func TestLaunchRelativePluginRootWithADash(t *testing.T) {
	root, archive, data := releasedPlugin(t)
	fakeSums(t, root)
	rs := serveRelease(t, map[string][]byte{archive: data})
	work, _, pdata := launchSite(t)
	if err := os.Symlink(root, filepath.Join(work, "-p")); err != nil {
		t.Fatal(err)
	}
	env := append(launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL), "CLAUDE_PLUGIN_ROOT=-p")
	res, _ := runBounded(t, time.Minute, env, work, "", filepath.Join(root, "hooks", "launch"), "cairn")
	if !strings.Contains(res.stderr, "refused the downloaded "+archive) || strings.Contains(res.stderr, "incomplete") {
		t.Errorf("cairn with CLAUDE_PLUGIN_ROOT=-p = %+v, want the install run (the archive refused for its sha256)", res)
	}
}

// A symbolic link at a file the launcher writes in the data directory (the build log, the
// record of what each session was shown, the failure record) was written through: a file
// wherever it led was overwritten. Cairn makes none there; the link and its target are left.
func TestLaunchWritesThroughNoLink(t *testing.T) {
	skipOnWindows(t)
	outside := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "theirs")
		writeFile(t, p, "theirs\n")
		return p
	}
	unchanged := func(t *testing.T, p string) {
		if b, err := os.ReadFile(p); err != nil || string(b) != "theirs\n" {
			t.Errorf("the file a link led to = %q (%v), want it unchanged", b, err)
		}
	}
	t.Run("build log and install-said", func(t *testing.T) {
		root := copyPlugin(t, launcherFiles...)
		work, _, data := launchSite(t)
		log, said := filepath.Join(data, "build-"+pluginVersion(t)+".log"), filepath.Join(data, ".install-said")
		logTo, saidTo := outside(t), outside(t)
		if err := os.MkdirAll(data, 0o755); err != nil {
			t.Fatal(err)
		}
		if os.Symlink(logTo, log) != nil || os.Symlink(saidTo, said) != nil {
			t.Fatal("symlink")
		}
		tools := toolDir(t)
		if p, err := exec.LookPath("cksum"); err == nil {
			if err := os.Symlink(p, filepath.Join(tools, "cksum")); err != nil {
				t.Fatal(err)
			}
		}
		calls := goThatFails(t, tools, work)
		env := launchEnv(root, data, work, tools, "CLAUDE_CODE_SESSION_ID=s1")
		res, _ := runBounded(t, 20*time.Second, env, work, initializeLine, "/bin/sh", "-c", hookCommand(t, "SessionStart"))
		if !strings.Contains(res.stderr+res.stdout, "cannot write its log, "+log+": make it a writable file") {
			t.Errorf("SessionStart over a link at its build log: %+v, want a line: cannot write %s ... make it a writable file", res, log)
		}
		unchanged(t, logTo)
		unchanged(t, saidTo)
		if b, err := os.ReadFile(calls); err == nil {
			t.Errorf("go ran over a link at its build log: %s", b)
		}
	})
	t.Run("failure record", func(t *testing.T) {
		root, archive, rs := foreignRelease(t)
		work, _, pdata := launchSite(t)
		record := filepath.Join(pdata, ".download-failed-"+pluginVersion(t))
		to := outside(t)
		if err := os.MkdirAll(pdata, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, record); err != nil {
			t.Fatal(err)
		}
		env := launchEnv(root, pdata, work, toolDir(t), "CAIRN_DOWNLOAD_URL="+rs.URL)
		for range 2 {
			res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
			if res.code != launchFailCode("cairn-mcp") || !strings.Contains(res.stderr, "cannot run on this machine") || rs.Hits(archive) != 1 {
				t.Errorf("cairn-mcp installing another processor's binaries = %+v after %d downloads, want exit 1, a line saying they cannot run and one download in all", res, rs.Hits(archive))
			}
		}
		unchanged(t, to)
		if b, err := os.ReadFile(record + ".why"); err != nil || !strings.Contains(string(b), "cannot run on this machine") {
			t.Errorf("%s.why = %q (%v), want the launcher's reason", record, b, err)
		}
	})
}
