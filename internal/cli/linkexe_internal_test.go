package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/vars"
)

// TestLinkNamedForItsSystem: on Windows, cairn doctor --link made ~/.local/bin/cairn, a link
// with no .exe: cmd, PowerShell and Go's LookPath find programs by PATHEXT, so `cairn` was not
// found, and doctor went on offering --link; uninstall did not remove it either. The link is
// now cairn.exe there, as the binary it names is, and uninstall finds it.
func TestLinkNamedForItsSystem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ goos, name string }{{"linux", "cairn"}, {"darwin", "cairn"}, {"windows", "cairn.exe"}} {
		t.Run(tc.goos, func(t *testing.T) {
			home := t.TempDir()
			set := filepath.Join(home, "data", "bin-1.0.0")
			exe := filepath.Join(set, tc.name)
			writeTestFile(t, exe, "binary")
			writeTestFile(t, filepath.Join(set, strings.Replace(tc.name, "cairn", "cairn-mcp", 1)), "binary")
			var stdout, stderr bytes.Buffer
			a := &app{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
				executable: func() (string, error) { return exe, nil }}
			c := a.linkCheck(true, tc.goos)
			want := filepath.Join(home, ".local", "bin", tc.name)
			if got, err := os.Readlink(want); !c.OK || err != nil || got != exe || !strings.HasPrefix(c.Detail, want+" -> ") {
				t.Fatalf("doctor --link for %s: %+v, %s links to %q (%v); want %s -> %s", tc.goos, c, want, got, err, want, exe)
			}
			if got := cairnLinks(home, exe, tc.goos); len(got) != 1 || got[0] != want {
				t.Errorf("uninstall's links for %s: %q, want [%s]", tc.goos, got, want)
			}
		})
	}
}

// TestLinkStepNamedForItsSystem: doctor's step named ~/.local/bin/cairn on Windows too, where
// doctor --link makes cairn.exe: a user looking there for what it made found no such file.
func TestLinkStepNamedForItsSystem(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct{ goos, want string }{{"linux", "~/.local/bin/cairn to this one"}, {"windows", "~/.local/bin/cairn.exe to this one"}} {
		t.Run(tc.goos, func(t *testing.T) {
			home := t.TempDir()
			exe := filepath.Join(home, "data", "bin-1.0.0", "cairn")
			a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
				executable: func() (string, error) { return exe, nil }}
			if c := a.linkCheck(false, tc.goos); !strings.Contains(c.Detail, tc.want) {
				t.Errorf("doctor on %s: %+v, want a step naming %q", tc.goos, c, tc.want)
			}
		})
	}
}

// TestUninstallKnowsTheLinkThroughTheStableCairn: ~/.local/bin/cairn linked to the launcher's
// DATA/cairn (as doctor --link makes it: TestLinkRepointsTheStableCairn) is Cairn's for
// uninstall run by any cairn (a checkout's, here), and still is once the plugin is removed,
// its data directory with it.
func TestUninstallKnowsTheLinkThroughTheStableCairn(t *testing.T) {
	t.Parallel()
	home, data, _, link := stableLink(t, "bin-1.0.0")
	set := filepath.Join(data, "bin-1.0.0")
	writeTestFile(t, filepath.Join(set, "cairn"), "binary")
	writeTestFile(t, filepath.Join(set, "cairn-mcp"), "binary")
	other := filepath.Join(t.TempDir(), "bin", "cairn")
	writeTestFile(t, other, "another build")
	if got := cairnLinks(home, other, "linux"); len(got) != 1 || got[0] != link {
		t.Errorf("uninstall's links: %q, want [%s]", got, link)
	}
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	if got := cairnLinks(home, other, "linux"); len(got) != 1 || got[0] != link {
		t.Errorf("uninstall's links, data directory gone: %q, want [%s]", got, link)
	}
}

// TestOwnSetCheckThroughTheStableCairn: before the first session of an updated plugin,
// ~/.local/bin/cairn runs the last version's cairn through DATA/cairn. The step said to start a
// session, then link again; the install that session makes points DATA/cairn at the new set,
// so the one step is the session. A data directory holding that link and an old build's log
// is still Cairn's for uninstall.
func TestOwnSetCheckThroughTheStableCairn(t *testing.T) {
	t.Parallel()
	home, data, _, link := stableLink(t, "bin-0.0.9")
	old, cur := filepath.Join(data, "bin-0.0.9"), filepath.Join(data, "bin-0.2.0")
	writeTestFile(t, filepath.Join(old, "cairn"), "binary")
	a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
		executable: func() (string, error) { return link, nil }}
	want := "start a Claude Code session: the plugin installs its binaries, and " + link + " runs them from then on"
	if c := a.ownSetCheck(cur, "linux"); c == nil || c.OK || c.Fix != want {
		t.Errorf("ownSetCheck = %+v, want the fix %q", c, want)
	}
	if err := os.RemoveAll(old); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(data, "build-0.0.9.log"), "cairn: this build failed.\n")
	if !launcherData(data) {
		t.Errorf("%s, holding DATA/cairn and a build log, is not taken for Cairn's", data)
	}
}

// TestLinkRepointsTheStableCairn: doctor --link linked ~/.local/bin/cairn to this cairn's set
// (DATA/bin-VERSION), so after an update it ran the last version until the person linked
// again. Where the launcher's DATA/cairn names this cairn, the link goes there, and follows each
// install. Where the launcher's DATA/cairn led elsewhere (its set removed
// a day after an update, or another version's set), doctor --link linked ~/.local/bin/cairn
// straight to this cairn's set, which the next update's install removes a day later: the link
// dangled again, and followed no install. DATA/cairn, the launcher's own link, is now pointed at
// this cairn and linked to, so the link runs this cairn and follows each install from then on.
// A DATA/cairn that is not the launcher's link (to bin-VERSION/cairn: a file, a link elsewhere)
// is not the launcher's to replace: the link goes to this cairn.
// One that names a newer version's set stays (an install keeps it naming the newest): doctor
// --link run by the cairn of a session still on the plugin before an update pointed it back at
// that older set, which the newer version's install removes a day later, and the link dangled.
func TestLinkRepointsTheStableCairn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, data, stable string)
		wantS bool   // linked through DATA/cairn
		runs  string // the set the link runs, "" for this cairn's
	}{
		{"this cairn's set", func(t *testing.T, data, stable string) {
			mustSymlink(t, filepath.Join("bin-1.0.0", "cairn"), stable)
		}, true, ""},
		{"dangling", func(t *testing.T, data, stable string) {
			mustSymlink(t, filepath.Join("bin-0.0.9", "cairn"), stable)
		}, true, ""},
		{"another set", func(t *testing.T, data, stable string) {
			writeTestFile(t, filepath.Join(data, "bin-0.0.9", "cairn"), "binary")
			writeTestFile(t, filepath.Join(data, "bin-0.0.9", ".checksums"), "sums")
			mustSymlink(t, filepath.Join("bin-0.0.9", "cairn"), stable)
		}, true, ""},
		{"not a link", func(t *testing.T, data, stable string) {
			writeTestFile(t, stable, "someone's file")
		}, false, ""},
		{"a link elsewhere", func(t *testing.T, data, stable string) {
			writeTestFile(t, stable+"-mine", "someone's file")
			mustSymlink(t, stable+"-mine", stable)
		}, false, ""},
		{"a newer set", func(t *testing.T, data, stable string) {
			writeTestFile(t, filepath.Join(data, "bin-1.1.0", "cairn"), "binary")
			writeTestFile(t, filepath.Join(data, "bin-1.1.0", ".checksums"), "sums")
			mustSymlink(t, filepath.Join("bin-1.1.0", "cairn"), stable)
		}, true, "bin-1.1.0"},
		{"a newer set's pre-release", func(t *testing.T, data, stable string) {
			writeTestFile(t, filepath.Join(data, "bin-1.0.0-rc.1", "cairn"), "binary")
			writeTestFile(t, filepath.Join(data, "bin-1.0.0-rc.1", ".checksums"), "sums")
			mustSymlink(t, filepath.Join("bin-1.0.0-rc.1", "cairn"), stable)
		}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			data := filepath.Join(home, ".claude", "plugins", "data", "cairn-cairn")
			set := filepath.Join(data, "bin-1.0.0")
			exe := filepath.Join(set, "cairn")
			writeTestFile(t, exe, "binary")
			writeTestFile(t, filepath.Join(set, "cairn-mcp"), "binary")
			writeTestFile(t, filepath.Join(set, ".checksums"), "sums")
			stable := filepath.Join(data, "cairn")
			tc.make(t, data, stable)
			a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
				executable: func() (string, error) { return exe, nil }}
			c := a.linkCheck(true, "linux")
			link := filepath.Join(home, ".local", "bin", "cairn")
			want := exe
			if tc.wantS {
				want = stable
			}
			if got, err := os.Readlink(link); !c.OK || err != nil || got != want || !strings.HasPrefix(c.Detail, link+" -> "+want) {
				t.Fatalf("doctor --link: %+v, %s links to %q (%v); want %s -> %s", c, link, got, err, link, want)
			}
			runs := exe
			if tc.runs != "" {
				runs = filepath.Join(data, tc.runs, "cairn")
			}
			if p, err := filepath.EvalSymlinks(link); err != nil || p != runs {
				t.Errorf("%s runs %q (%v), want %s", link, p, err, runs)
			}
			if tc.runs != "" && !strings.Contains(c.Detail, runs) {
				t.Errorf("doctor --link: %q does not say the link runs %s", c.Detail, runs)
			}
			if !tc.wantS {
				if b, err := os.ReadFile(stable); err != nil || string(b) != "someone's file" {
					t.Errorf("%s, not a link, became %q (%v)", stable, b, err)
				}
				if !strings.Contains(c.Detail, stable) {
					t.Errorf("doctor --link: %q does not say why the link does not follow updates (%s)", c.Detail, stable)
				}
			}
			if _, err := os.Lstat(filepath.Join(data, ".cairn-link")); err == nil {
				t.Errorf("the link made aside is left in %s", data)
			}
		})
	}
}

// TestDanglingLinkThroughTheStableCairn: with ~/.local/bin/cairn -> DATA/cairn and DATA/cairn's
// set removed, doctor said "~/.local/bin/cairn links to DATA/cairn, which is not there", while
// DATA/cairn was there: it names the path that is missing.
func TestDanglingLinkThroughTheStableCairn(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	home, data, stable, link := stableLink(t, "bin-0.0.9")
	exe := filepath.Join(t.TempDir(), "bin-1.0.0", "cairn")
	a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
		executable: func() (string, error) { return exe, nil }}
	c := a.linkCheck(false, "linux")
	want := link + " links to " + stable + ", whose " + filepath.Join(data, "bin-0.0.9", "cairn") + " is not there"
	if c.OK || c.Detail != want {
		t.Errorf("doctor: %+v, want the detail %q", c, want)
	}
}

// stableLink makes, in a new home, the launcher's DATA/cairn linking to set/cairn (set a
// directory in DATA, which it does not make) and ~/.local/bin/cairn linking to DATA/cairn, as
// doctor --link makes it: it returns the home, DATA, DATA/cairn and ~/.local/bin/cairn.
func stableLink(t *testing.T, set string) (home, data, stable, link string) {
	t.Helper()
	home = t.TempDir()
	data = filepath.Join(home, ".claude", "plugins", "data", "cairn-cairn")
	stable = filepath.Join(data, "cairn")
	link = filepath.Join(home, ".local", "bin", "cairn")
	for _, dir := range []string{data, filepath.Dir(link)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, filepath.Join(set, "cairn"), stable)
	mustSymlink(t, stable, link)
	return home, data, stable, link
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestLauncherDataLeftovers: an install killed between making DATA/.cairn-link and renaming it
// over DATA/cairn (hooks/install, doctor --link) leaves it; it counted as another plugin's file,
// so uninstall kept a data directory holding nothing but Cairn's. Another's file still keeps it.
func TestLauncherDataLeftovers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		files []string
		want  bool
	}{
		{[]string{".cairn-link", "cairn", "build-0.1.0.log"}, true},
		{[]string{".cairn-link"}, true},
		{[]string{".cairn-link", "cairn", "notes.txt"}, false},
		// The marks of install failures shown (hooks/install, cairn_told).
		{[]string{".install-said", "build-0.1.0.log"}, true},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.Symlink(filepath.Join("bin-0.1.0", "cairn"), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		if got := launcherData(dir); got != tc.want {
			t.Errorf("launcherData with %q = %v, want %v", tc.files, got, tc.want)
		}
	}
}

// TestNewerVersionAsTheLauncher: doctor --link leaves DATA/cairn on a newer set by the rule
// hooks/install's cairn_newer points it with; the two must agree, or each would undo the other.
func TestNewerVersionAsTheLauncher(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("no POSIX sh")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "hooks", "install"))
	if err != nil {
		t.Fatal(err)
	}
	_, fn, ok := strings.Cut(string(src), "\ncairn_newer() {\n")
	fn, _, ok2 := strings.Cut(fn, "\n}\n")
	if !ok || !ok2 {
		t.Fatal("hooks/install has no cairn_newer function")
	}
	pairs := [][2]string{
		{"1.1.0", "1.0.0"}, {"1.0.0", "1.1.0"}, {"1.0.0", "1.0.0"}, {"1.10.0", "1.9.9"}, {"2.0", "1.9.9"},
		{"1.0.0", "1.0.0-rc.1"}, {"1.0.0-rc.1", "1.0.0"}, {"1.0.0-rc.2", "1.0.0-rc.1"}, {"1.0.1-rc.1", "1.0.0"},
		{"1.0.0+abc", "1.0.0"}, {"1.0.0", "dev"}, {"dev", "0.0.1"}, {"dev", "dev"}, {"1.0.0.1", "1.0.0"},
		{"123456789.0.0", "1.0.0"}, {"12345678.0.0", "1.0.0"}, {"1.x.0", "1.0.1"}, {"", "0.0.1"},
	}
	var script strings.Builder
	script.WriteString("cairn_newer() {\n" + fn + "\n}\n")
	for _, p := range pairs {
		fmt.Fprintf(&script, "if cairn_newer '%s' '%s'; then echo y; else echo n; fi\n", p[0], p[1])
	}
	out, err := exec.Command(sh, "-c", script.String()).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(pairs) {
		t.Fatalf("sh said %q for %d pairs", got, len(pairs))
	}
	for i, p := range pairs {
		if want := got[i] == "y"; newerVersion(p[0], p[1]) != want {
			t.Errorf("newerVersion(%q, %q) = %v, cairn_newer says %v", p[0], p[1], !want, want)
		}
	}
}

// TestLinkThereButOffPath: after cairn doctor --link, whose line says to add ~/.local/bin to
// PATH, plain doctor in a shell whose PATH still lacks it said to make the link again
// ("link ~/.local/bin/cairn to this one: ... doctor --link"), which changes nothing: it says the
// link is there, and that its directory is what PATH lacks.
func TestLinkThereButOffPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	home := t.TempDir()
	exe := filepath.Join(t.TempDir(), "cairn")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, ".local", "bin", "cairn")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
		executable: func() (string, error) { return exe, nil }}
	mustSymlink(t, exe, link)
	c := a.linkCheck(false, "linux")
	want := "not needed: the plugin runs its binaries by their paths; to type cairn in a shell, add " + filepath.Dir(link) + " to PATH (" + link + " links to this one)"
	if !c.OK || c.Detail != want {
		t.Errorf("doctor: %+v, want the detail %q", c, want)
	}
}

// TestLinkFollowsADowngrade: after the plugin was put back to an older version, DATA/cairn
// (an install keeps it on the newest set) and ~/.local/bin/cairn through it ran the newer
// version's cairn for good. doctor said it was not the installed plugin's cairn, with the step
// to run that one's doctor --link, which left DATA/cairn on the newer set: the same line at
// every doctor. Where the set doctor --link is run from is the one Claude Code's records name,
// it points DATA/cairn there, over a newer set; where its binaries are not installed yet, the
// step is a session and then that link, not the session alone (whose install keeps the newer).
//
// With ~/.claude a symbolic link (a dotfiles checkout), the records name the set through it and
// this cairn's path is read through it: the set was not taken for the one recorded, and
// DATA/cairn stayed on the newer one.
func TestLinkFollowsADowngrade(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, linked := range []bool{false, true} {
		home, data, stable, link := stableLink(t, "bin-1.1.0")
		if linked {
			moved := filepath.Join(t.TempDir(), "dotfiles-claude")
			if err := os.Rename(filepath.Join(home, ".claude"), moved); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, moved, filepath.Join(home, ".claude"))
		}
		newer, cur := filepath.Join(data, "bin-1.1.0"), filepath.Join(data, "bin-1.0.0")
		for _, set := range []string{newer, cur} {
			writeTestFile(t, filepath.Join(set, "cairn"), "binary")
			writeTestFile(t, filepath.Join(set, "cairn-mcp"), "binary")
			writeTestFile(t, filepath.Join(set, ".checksums"), "sums")
		}
		root := filepath.Join(t.TempDir(), "cairn")
		quoted, _ := json.Marshal(root)
		writeTestFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"), `{"name": "cairn", "version": "1.0.0"}`)
		writeTestFile(t, filepath.Join(home, ".claude", "plugins", "installed_plugins.json"),
			`{"version": 2, "plugins": {"cairn@cairn": [{"scope": "user", "installPath": `+string(quoted)+`}]}}`)
		getenv := func(k string) string { return map[string]string{"HOME": home}[k] }

		// Its binaries not installed yet: a session installs them, and DATA/cairn stays on 1.1.0.
		if err := os.Rename(cur, cur+".away"); err != nil {
			t.Fatal(err)
		}
		a := &app{getenv: getenv, executable: func() (string, error) { return link, nil }}
		want := "start a Claude Code session (the plugin installs its binaries), then " + vars.Quote(filepath.Join(cur, "cairn")) + " doctor --link"
		if c := a.ownSetCheck(cur, "linux"); c == nil || c.Fix != want {
			t.Errorf("ownSetCheck before the install = %+v, want the fix %q", c, want)
		}
		if err := os.Rename(cur+".away", cur); err != nil {
			t.Fatal(err)
		}

		exe := filepath.Join(cur, "cairn")
		a = &app{getenv: getenv, executable: func() (string, error) { return exe, nil }}
		if c := a.linkCheck(true, "linux"); !c.OK {
			t.Fatalf("doctor --link: %+v", c)
		}
		real, _ := filepath.EvalSymlinks(exe)
		if p, err := filepath.EvalSymlinks(link); err != nil || p != real {
			t.Errorf("~/.claude linked %v: after doctor --link by the installed plugin's cairn, %s runs %q (%v), want %s", linked, link, p, err, real)
		}
		if got, err := os.Readlink(stable); err != nil || got != filepath.Join("bin-1.0.0", "cairn") {
			t.Errorf("~/.claude linked %v: %s links to %q (%v), want bin-1.0.0/cairn", linked, stable, got, err)
		}
	}
}

// TestLinkRacesAnInstall: doctor --link made DATA/cairn's link aside under the install's own
// name, .cairn-link, and did not look after its rename. An install of a newer version at once
// (hooks/install, cairn_settle) removed doctor's link, made its own there and renamed it in:
// doctor's rename found nothing and ~/.local/bin/cairn went straight to this set, which that
// install removes a day later. An install that renamed its link in, and looked, just before
// doctor's rename had DATA/cairn put back on the older set. Now doctor's link is its own, and
// DATA/cairn ends on the newest set whichever renames last.
func TestLinkRacesAnInstall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		install string // the install's steps, run by sh in DATA between doctor's link and rename
	}{
		{"the install renames in between", `rm -f .cairn-link && ln -s bin-1.1.0/cairn .cairn-link && mv -f .cairn-link cairn`},
		{"the install's link made aside", `rm -f .cairn-link && ln -s bin-1.1.0/cairn .cairn-link`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			data := filepath.Join(home, ".claude", "plugins", "data", "cairn-cairn")
			exe := filepath.Join(data, "bin-1.0.0", "cairn")
			for _, set := range []string{"bin-1.0.0", "bin-1.1.0"} {
				writeTestFile(t, filepath.Join(data, set, "cairn"), "binary")
				writeTestFile(t, filepath.Join(data, set, "cairn-mcp"), "binary")
			}
			writeTestFile(t, filepath.Join(data, "bin-1.0.0", ".checksums"), "sums")
			stable := filepath.Join(data, "cairn")
			mustSymlink(t, filepath.Join("bin-0.0.9", "cairn"), stable) // dangling: doctor repoints it
			ran := false
			beforeLinkRename = func() {
				if ran {
					return
				}
				ran = true
				writeTestFile(t, filepath.Join(data, "bin-1.1.0", ".checksums"), "sums")
				cmd := exec.Command("sh", "-c", tc.install)
				cmd.Dir = data
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("the install's steps: %v: %s", err, out)
				}
			}
			t.Cleanup(func() { beforeLinkRename = func() {} })
			a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
				executable: func() (string, error) { return exe, nil }}
			c := a.linkCheck(true, "linux")
			link := filepath.Join(home, ".local", "bin", "cairn")
			if got, err := os.Readlink(link); !c.OK || err != nil || got != stable {
				t.Fatalf("doctor --link: %+v, %s links to %q (%v); want %s", c, link, got, err, stable)
			}
			want := filepath.Join(data, "bin-1.1.0", "cairn")
			if p, err := filepath.EvalSymlinks(stable); err != nil || p != want {
				t.Errorf("%s runs %q (%v), want the newest set's %s", stable, p, err, want)
			}
			if _, err := os.Lstat(filepath.Join(data, doctorLinkAside)); err == nil {
				t.Errorf("doctor's link made aside is left in %s", data)
			}
		})
	}
}

// TestOwnSetCheckThroughALinkedDataDir: with ~/.claude a symbolic link (a dotfiles checkout,
// say), Claude Code's records name the plugin's set through the link, and this cairn's path,
// read through every link, names it by its target: doctor said this cairn was not the
// installed plugin's, with a fix, doctor --link run from that set, that ran this same cairn and
// said so again. One directory however it is spelled is the plugin's set.
func TestOwnSetCheckThroughALinkedDataDir(t *testing.T) {
	t.Parallel()
	real := filepath.Join(t.TempDir(), "dotfiles-claude")
	writeTestFile(t, filepath.Join(real, "plugins", "data", "cairn-cairn", "bin-0.2.0", "cairn"), "binary")
	home := t.TempDir()
	if err := os.Symlink(real, filepath.Join(home, ".claude")); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(real, "plugins", "data", "cairn-cairn", "bin-0.2.0", "cairn")
	a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
		executable: func() (string, error) { return exe, nil }}
	if c := a.ownSetCheck(filepath.Join(home, ".claude", "plugins", "data", "cairn-cairn", "bin-0.2.0"), "linux"); c != nil {
		t.Errorf("ownSetCheck = %+v, want none: this cairn is the set's", c)
	}
}
