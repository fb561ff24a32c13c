package plugintest

import (
	"strings"
	"testing"
	"time"
)

// A file the installer makes with the ':' builtin (": >FILE") that cannot be made ended dash
// at once with exit 2 (a redirect that fails on a special builtin ends a non-interactive
// shell): from a Stop hook, an exit 2 blocks the stop and hands the shell's line to the model;
// from the process that takes over a hook's install, the lock was left behind and the install
// said to have failed. Here a directory stands where the file goes (in life, a disk out of
// inodes at that moment): the start goes on as where the file is not needed.
func TestLaunchGoesOnWhereAMarkerCannotBeMade(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct {
		name  string
		after string // run by curl after the download, in the directory d of its file
		slow  bool   // the hook's download runs out of time mid-body (else the release is served)
		want  string // in the hook's output
	}{
		// The mark of a download cut short by the hook's clock (bin-V.tmp/.part).
		{"part", `mkdir "$d/.part"`, true, "takes longer than a hook may wait"},
		// The lock's start time, emptied by the process that takes over the install lock.
		{"lock start", `l=$(echo "${d%/*}"/.install-lock-*) && rm -f "$l/start" && mkdir "$l/start"`, false, "ran cairn-session-start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var root, url string
			if tc.slow {
				root, url = copyPlugin(t, launcherFiles...), serveSlowly(t)
				fakeSums(t, root)
			} else {
				files := map[string][]byte{}
				for name := range binarySources {
					files[name] = []byte("#!/bin/sh\necho ran " + name + "\n")
				}
				var rs *releaseServer
				root, _, rs = archiveRelease(t, files)
				url = rs.URL
			}
			work, _, data := launchSite(t)
			tools := toolDir(t)
			wrapTool(t, tools, "curl", func(real string) string {
				return "o= p=\nfor a; do\n\tshift\n\tif [ \"$p\" = --max-time ]; then a=" + shortTimer + "; fi\n\tif [ \"$p\" = -o ]; then o=$a; fi\n\tp=$a\n\tset -- \"$@\" \"$a\"\ndone\n" +
					real + " \"$@\"\nrc=$?\nd=${o%/*}\n" + tc.after + "\nexit $rc\n"
			})
			env := launchEnv(root, data, work, tools, "CAIRN_DOWNLOAD_URL="+url)
			res, _ := runBounded(t, 30*time.Second, env, work, `{"session_id":"s"}`, "/bin/sh", "-c", hookCommand(t, "SessionStart"))
			if res.code != 0 || strings.Contains(res.stderr, "cannot create") || strings.Contains(res.stderr, "failed") ||
				!strings.Contains(res.stdout+res.stderr, tc.want) {
				t.Errorf("SessionStart: %+v, want exit 0 and %q", res, tc.want)
			}
			if tc.slow {
				waitUnlocked(t, data)
			} else {
				waitInstalled(t, data)
			}
		})
	}
}
