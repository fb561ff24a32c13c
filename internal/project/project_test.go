package project_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/project"
)

// tree builds files and directories under base: a key ending in "/" is a directory, any
// other key a file with that content; "{base}" in content is replaced by base.
func tree(t *testing.T, base string, entries map[string]string) {
	t.Helper()
	for name, content := range entries {
		p := filepath.Join(base, filepath.FromSlash(name))
		if name[len(name)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		c := []byte(replaceBase(content, base))
		if err := os.WriteFile(p, c, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func replaceBase(s, base string) string {
	return strings.ReplaceAll(s, "{base}", filepath.ToSlash(base))
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// mainWithWorktree is a main clone at repo/ with a linked worktree at wt/ (absolute gitdir,
// as git writes by default) and one at wt2/ (relative paths, worktree.useRelativePaths).
var mainWithWorktree = map[string]string{
	"repo/.git/HEAD":                      "ref: refs/heads/main\n",
	"repo/src/pkg/":                       "",
	"repo/.git/worktrees/wt/commondir":    "../..\n",
	"repo/.git/worktrees/wt/gitdir":       "{base}/wt/.git\n",
	"wt/.git":                             "gitdir: {base}/repo/.git/worktrees/wt\n",
	"wt/sub/dir/":                         "",
	"repo/.git/worktrees/wt2/commondir":   "../..\n",
	"repo/.git/worktrees/wt2/gitdir":      "../../../../wt2/.git\n",
	"wt2/.git":                            "gitdir: ../repo/.git/worktrees/wt2\n",
	"repo/.git/worktrees/stale/commondir": "../..\n",
	"repo/.git/worktrees/stale/gitdir":    "{base}/elsewhere/.git\n",
	"stale/.git":                          "gitdir: {base}/repo/.git/worktrees/stale\n",
}

func TestRoots(t *testing.T) {
	tests := []struct {
		name       string
		tree       map[string]string
		wd         string // relative to base
		env        map[string]string
		wantRoot   string // relative to base
		wantCommon string
	}{
		{name: "plain-repo", tree: map[string]string{"repo/.git/HEAD": "x"}, wd: "repo",
			wantRoot: "repo", wantCommon: "repo"},
		{name: "subfolder", tree: map[string]string{"repo/.git/HEAD": "x", "repo/a/b/c/": ""},
			wd: "repo/a/b/c", wantRoot: "repo", wantCommon: "repo"},
		{name: "worktree-absolute-gitdir", tree: mainWithWorktree, wd: "wt",
			wantRoot: "wt", wantCommon: "repo"},
		{name: "worktree-subfolder", tree: mainWithWorktree, wd: "wt/sub/dir",
			wantRoot: "wt", wantCommon: "repo"},
		{name: "worktree-relative-gitdir", tree: mainWithWorktree, wd: "wt2",
			wantRoot: "wt2", wantCommon: "repo"},
		{name: "worktree-stale-backlink", tree: mainWithWorktree, wd: "stale",
			wantRoot: "stale", wantCommon: "stale"},
		{name: "main-beside-worktrees", tree: mainWithWorktree, wd: "repo/src/pkg",
			wantRoot: "repo", wantCommon: "repo"},
		{name: "submodule-git-file", tree: map[string]string{
			"super/.git/modules/lib/HEAD": "x",
			"super/lib/.git":              "gitdir: ../.git/modules/lib\n",
			"super/lib/src/":              "",
		}, wd: "super/lib/src", wantRoot: "super/lib", wantCommon: "super/lib"},
		{name: "bare-main-repo", tree: map[string]string{
			"proj.git/HEAD":                  "x",
			"proj.git/worktrees/w/commondir": "../..\n",
			"proj.git/worktrees/w/gitdir":    "{base}/w/.git\n",
			"w/.git":                         "gitdir: {base}/proj.git/worktrees/w\n",
		}, wd: "w", wantRoot: "w", wantCommon: "proj.git"},
		{name: "git-file-garbage", tree: map[string]string{"odd/.git": "not a gitdir line\n"},
			wd: "odd", wantRoot: "odd", wantCommon: "odd"},
		{name: "worktree-gitdir-missing", tree: map[string]string{"gone/.git": "gitdir: /nonexistent/x/.git/worktrees/gone\n"},
			wd: "gone", wantRoot: "gone", wantCommon: "gone"},
		{name: "no-git", tree: map[string]string{"plain/a/": ""}, wd: "plain/a",
			wantRoot: "plain/a", wantCommon: "plain/a"},
		{name: "project-dir-env-wins", tree: map[string]string{"repo/.git/HEAD": "x", "repo/x/": "", "other/": ""},
			wd: "other", env: map[string]string{"CLAUDE_PROJECT_DIR": "{base}/repo/x"},
			wantRoot: "repo", wantCommon: "repo"},
		{name: "project-dir-env-relative", tree: map[string]string{"repo/.git/HEAD": "x", "repo/x/": ""},
			wd: "repo", env: map[string]string{"CLAUDE_PROJECT_DIR": "x"},
			wantRoot: "repo", wantCommon: "repo"},
		{name: "project-dir-env-no-git", tree: map[string]string{"a/b/": "", "c/": ""},
			wd: "c", env: map[string]string{"CLAUDE_PROJECT_DIR": "{base}/a/b"},
			wantRoot: "a/b", wantCommon: "a/b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			tree(t, base, tc.tree)
			e := map[string]string{}
			for k, v := range tc.env {
				e[k] = filepath.FromSlash(replaceBase(v, base))
			}
			wd := filepath.Join(base, filepath.FromSlash(tc.wd))
			root, err := project.Root(env(e), wd)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(base, filepath.FromSlash(tc.wantRoot)); root != want {
				t.Errorf("Root = %s, want %s", root, want)
			}
			common, err := project.GitCommonRoot(env(e), wd)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(base, filepath.FromSlash(tc.wantCommon)); common != want {
				t.Errorf("GitCommonRoot = %s, want %s", common, want)
			}
			sd, err := project.StateDir(env(e), wd)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(base, filepath.FromSlash(tc.wantRoot), ".claude", "cairn"); sd != want {
				t.Errorf("StateDir = %s, want %s", sd, want)
			}
			// One walk (Find) answers all of them alike.
			f, err := project.Find(env(e), wd)
			if err != nil {
				t.Fatal(err)
			}
			sdOf, err := project.StateDirOf(env(e), wd, f)
			if f.Root != root || f.CommonRoot() != common || f.InGit != project.HasGit(root) || err != nil || sdOf != sd {
				t.Errorf("Find = root %s, common %s, in git %t, state dir %s (%v); want %s, %s, %t, %s",
					f.Root, f.CommonRoot(), f.InGit, sdOf, err, root, common, project.HasGit(root), sd)
			}
		})
	}
}

func TestStateDirOverride(t *testing.T) {
	base := t.TempDir()
	tree(t, base, map[string]string{"repo/.git/HEAD": "x", "repo/sub/": ""})
	wd := filepath.Join(base, "repo", "sub")
	abs := filepath.Join(base, "state-elsewhere")
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"absolute", map[string]string{"CAIRN_STATE_DIR": abs}, abs},
		// Not the working directory's: the agent's cairn run in repo/sub had a state of its
		// own, apart from the hooks' and the MCP server's in the launch directory.
		{"relative-to-root", map[string]string{"CAIRN_STATE_DIR": "st"}, filepath.Join(base, "repo", "st")},
		{"relative-to-root-up", map[string]string{"CAIRN_STATE_DIR": filepath.Join("..", "st")}, filepath.Join(base, "st")},
		{"unclean", map[string]string{"CAIRN_STATE_DIR": abs + string(filepath.Separator) + "." + string(filepath.Separator)}, abs},
		{"empty-means-unset", map[string]string{"CAIRN_STATE_DIR": ""}, filepath.Join(base, "repo", ".claude", "cairn")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := project.StateDir(env(tc.env), wd)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("StateDir = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	if _, err := project.Root(env(nil), ""); err == nil {
		t.Error("Root with no wd and no CLAUDE_PROJECT_DIR: want an error")
	}
	if _, err := project.Root(env(map[string]string{"CLAUDE_PROJECT_DIR": "rel"}), "also-rel"); err == nil {
		t.Error("Root with only relative paths: want an error")
	}
	if _, err := project.StateDir(env(map[string]string{"CAIRN_STATE_DIR": "rel"}), "also-rel"); err == nil {
		t.Error("StateDir with only relative paths: want an error")
	}
	if _, err := project.Root(nil, t.TempDir()); err != nil {
		t.Errorf("Root with nil getenv: %v", err)
	}
}

func TestGitSymlink(t *testing.T) {
	base := t.TempDir()
	tree(t, base, map[string]string{"real-git/HEAD": "x", "proj/sub/": ""})
	if err := os.Symlink(filepath.Join(base, "real-git"), filepath.Join(base, "proj", ".git")); err != nil {
		t.Skipf("symlinks unavailable here: %v", err)
	}
	root, err := project.Root(env(nil), filepath.Join(base, "proj", "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "proj"); root != want {
		t.Errorf("Root = %s, want %s", root, want)
	}
}

// TestRealGitWorktree checks the file reading against what a real git writes: a clone, a
// linked worktree (default absolute paths) and a subfolder of it. The package itself never
// runs git; only this test does, to produce genuine files.
func TestRealGitWorktree(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed; the hand-built trees in TestRoots cover the same layout")
	}
	base := t.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r // git writes resolved paths (macOS /var -> /private/var)
	}
	repo := filepath.Join(base, "my.repo_X")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+filepath.Join(base, "gitconfig"), "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	run(repo, "init", "-q")
	run(repo, "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(base, "wt one")
	run(repo, "worktree", "add", "-q", "-b", "feature", wt)
	sub := filepath.Join(wt, "deep", "er")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ wd, root, common string }{
		{repo, repo, repo},
		{wt, wt, repo},
		{sub, wt, repo},
	} {
		root, err := project.Root(env(nil), tc.wd)
		if err != nil || root != tc.root {
			t.Errorf("Root(%s) = %s, %v; want %s", tc.wd, root, err, tc.root)
		}
		common, err := project.GitCommonRoot(env(nil), tc.wd)
		if err != nil || common != tc.common {
			t.Errorf("GitCommonRoot(%s) = %s, %v; want %s", tc.wd, common, err, tc.common)
		}
	}
}

func TestCacheDir(t *testing.T) {
	for _, c := range []struct{ xdg, home, want string }{
		{"/x/cache", "/home/u", "/x/cache/cairn"},
		{"", "/home/u", "/home/u/.cache/cairn"},
		{"rel/cache", "/home/u", "/home/u/.cache/cairn"}, // relative: ignored, as the launcher does
		{"rel/cache", "", ""},
		{"", "", ""},
		{"", "relhome", ""},
	} {
		getenv := func(k string) string {
			if k == "XDG_CACHE_HOME" {
				return c.xdg
			}
			return ""
		}
		if got := project.CacheDir(getenv, c.home); got != c.want {
			t.Errorf("CacheDir(XDG_CACHE_HOME=%q, home=%q) = %q, want %q", c.xdg, c.home, got, c.want)
		}
	}
}

// A main checkout or a bare repository has linked worktrees when its git directory's
// worktrees/ holds one that names it as its common directory; a project outside git with a
// folder named worktrees, a lone clone, and a worktrees/ entry of another repository have none.
func TestHasLinkedWorktrees(t *testing.T) {
	base := t.TempDir()
	tree(t, base, mainWithWorktree)
	tree(t, base, map[string]string{
		"bare.git/HEAD":                  "ref: refs/heads/main\n",
		"bare.git/worktrees/w/commondir": "../..\n",
		"plain/worktrees/w/commondir":    "../../../repo/.git\n",
		"lone/.git/HEAD":                 "ref: refs/heads/main\n",
		"lone/.git/worktrees/":           "",
	})
	for dir, want := range map[string]bool{"repo": true, "bare.git": true, "plain": false, "lone": false, "wt": false} {
		if got := project.HasLinkedWorktrees(filepath.Join(base, dir)); got != want {
			t.Errorf("%s: %v, want %v", dir, got, want)
		}
	}
}

// Superseded and cli's installedPlugin rank installed_plugins.json's entries with one
// Installation.Rank: the project's own installation over a user-wide one, another project's
// never, whatever order they come in.
func TestSupersededRanksAsInstalledPlugin(t *testing.T) {
	config := t.TempDir()
	root := filepath.Join(config, "plugins", "cache", "mkt", "cairn", "1.0.0")
	for p, text := range map[string]string{
		filepath.Join(root, ".claude-plugin", "plugin.json"): `{"name":"cairn","version":"1.0.0"}` + "\n",
		filepath.Join(root, project.OrphanedMark):            "1796099015005",
		filepath.Join(config, "plugins", "installed_plugins.json"): `{"version":2,"plugins":{"cairn@mkt":[
			{"scope":"local","installPath":"/p/other","version":"9.0.0","projectPath":"/work/other"},
			{"scope":"project","installPath":"/p/mine","version":"1.2.0","projectPath":"/work/mine/"},
			{"scope":"user","installPath":"/p/user","version":"1.1.0"}]}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ projectDir, want string }{{"/work/mine", "1.2.0"}, {"/work/third", "1.1.0"}, {"", "1.1.0"}} {
		env := map[string]string{"CLAUDE_CONFIG_DIR": config, project.EnvProjectDir: tc.projectDir}
		if got, running := project.Superseded(func(k string) string { return env[k] }, root); got != tc.want || running != "1.0.0" {
			t.Errorf("project %q: superseded by %q (running %q), want %q (running 1.0.0)", tc.projectDir, got, running, tc.want)
		}
	}
	for _, tc := range []struct {
		in   project.Installation
		rank int
	}{
		{project.Installation{Scope: "user"}, 1},
		{project.Installation{Scope: "project", ProjectPath: "/work/mine/"}, 2},
		{project.Installation{Scope: "local", ProjectPath: "/work/other"}, 0},
	} {
		if got := tc.in.Rank("/work/mine"); got != tc.rank {
			t.Errorf("%+v ranks %d for /work/mine, want %d", tc.in, got, tc.rank)
		}
	}
}

// A relative HOME, CLAUDE_CONFIG_DIR or CLAUDE_CODE_PLUGIN_CACHE_DIR names a directory under
// wherever the process runs, not Claude Code's: installed_plugins.json found there (a
// subdirectory's, say) is no update of the plugin, and doctor and the update notice name none.
func TestPluginsDirRelativeIsNone(t *testing.T) {
	cwd := t.TempDir()
	root := filepath.Join(t.TempDir(), "cache", "mkt", "cairn", "1.0.0")
	records := `{"version":2,"plugins":{"cairn@mkt":[{"scope":"user","installPath":"/p/user","version":"1.1.0"}]}}`
	for p, text := range map[string]string{
		filepath.Join(root, ".claude-plugin", "plugin.json"):               `{"name":"cairn","version":"1.0.0"}` + "\n",
		filepath.Join(root, project.OrphanedMark):                          "1796099015005",
		filepath.Join(cwd, ".claude", "plugins", "installed_plugins.json"): records,
		filepath.Join(cwd, "cfg", "plugins", "installed_plugins.json"):     records,
		filepath.Join(cwd, "pc", "installed_plugins.json"):                 records,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(cwd)
	for _, env := range []map[string]string{
		{"HOME": "."},
		{"HOME": "/nonexistent", "CLAUDE_CONFIG_DIR": "cfg"},
		{"HOME": "/nonexistent", "CLAUDE_CODE_PLUGIN_CACHE_DIR": "pc"},
	} {
		getenv := func(k string) string { return env[k] }
		if d := project.PluginsDir(getenv, env["HOME"]); d != "" {
			t.Errorf("%v: PluginsDir = %q, want none", env, d)
		}
		if got, running := project.Superseded(getenv, root); got != "" {
			t.Errorf("%v: superseded by %q (running %q), want not", env, got, running)
		}
	}
}

// A relative CLAUDE_PLUGIN_ROOT names a directory under wherever the process runs, not the
// session's plugin: a marked one found there is no update, and the update notice names none.
func TestSupersededRelativeRootIsNone(t *testing.T) {
	config, cwd := t.TempDir(), t.TempDir()
	root := filepath.Join("mkt", "cairn", "1.0.0")
	for p, text := range map[string]string{
		filepath.Join(cwd, root, ".claude-plugin", "plugin.json"):  `{"name":"cairn","version":"1.0.0"}` + "\n",
		filepath.Join(cwd, root, project.OrphanedMark):             "1796099015005",
		filepath.Join(config, "plugins", "installed_plugins.json"): `{"version":2,"plugins":{"cairn@mkt":[{"scope":"user","installPath":"/p/user","version":"1.1.0"}]}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(cwd)
	getenv := func(k string) string { return map[string]string{"CLAUDE_CONFIG_DIR": config}[k] }
	if got, running := project.Superseded(getenv, root); got != "" {
		t.Errorf("superseded by %q (running %q), want not", got, running)
	}
}
