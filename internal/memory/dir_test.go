package memory

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The expected keys were computed by the function shipped in Claude Code 2.1.330 (run with
// node on the same inputs; see TestSanitizePathMatchesNode for the live comparison).
func TestSanitizePath(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"dots-underscores", "/home/a/my.proj_x", "-home-a-my-proj-x"},
		{"spaces-uppercase-parens", "/Users/Jane Doe/Code/My App (v2)/src", "-Users-Jane-Doe-Code-My-App--v2--src"},
		{"windows", `C:\Users\x\proj`, "C--Users-x-proj"},
		{"astral-is-two-units", "/home/u/🙂/é", "-home-u-----"},
		{"long-hashed", "/home/user/" + strings.Repeat("very-long-directory-name-", 10) + "end",
			"-home-user-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-directory-name-very-long-dire-h7rnw8"},
		{"long-mixed", "/x/" + strings.Repeat("A.b_c ", 50),
			"-x-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-A-b-c-j155dw"},
		{"exactly-200", "/" + strings.Repeat("a", 199), "-" + strings.Repeat("a", 199)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SanitizePath(tc.in); got != tc.want {
				t.Errorf("SanitizePath(%q)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestPathHashMinInt32(t *testing.T) {
	// Math.abs(-2^31) is 2^31 in JavaScript; a 32-bit negation would stay negative.
	if got := pathHashAbs(-1 << 31); got != "zik0zk" {
		t.Errorf("abs of min int32 in base 36 = %s, want zik0zk", got)
	}
}

// TestSanitizePathMatchesNode runs Claude Code's own key function (copied from the 2.1.330
// bundle) under node over random paths and compares. Skipped where node is not installed.
func TestSanitizePathMatchesNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; TestSanitizePath holds values it computed")
	}
	const js = `function rse(t){let e=0;for(let n=0;n<t.length;n++)e=(e<<5)-e+t.charCodeAt(n)|0;return e}
function KN(e){let n=e.replace(/[^a-zA-Z0-9]/g,"-");if(n.length<=200)return n;return` + "`${n.slice(0,200)}-${Math.abs(rse(e)).toString(36)}`" + `}
let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.stringify(JSON.parse(s).map(KN))));`
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcXYZ019 ._-/\\:()@#é漢🙂\u200b")
	var inputs []string
	for i := range 300 {
		n := 1 + r.IntN(60)
		if i%3 == 0 {
			n = 150 + r.IntN(200)
		}
		var b strings.Builder
		b.WriteByte('/')
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	in, _ := json.Marshal(inputs)
	cmd := exec.Command(node, "-e", js)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, p := range inputs {
		if got := SanitizePath(p); got != want[i] {
			t.Errorf("SanitizePath(%q)\n got %s\nnode %s", p, got, want[i])
		}
	}
}

// fixture is a home, a config dir and projects laid out under one temp dir.
type fixture struct {
	base, home string
	env        map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, home: filepath.Join(base, "home"), env: map[string]string{}}
	f.env["HOME"] = f.home
	f.mkdir(t, "home/.claude")
	return f
}

func (f *fixture) path(rel string) string { return filepath.Join(f.base, filepath.FromSlash(rel)) }

func (f *fixture) mkdir(t *testing.T, rel string) string {
	t.Helper()
	p := f.path(rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := f.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "{base}", filepath.ToSlash(f.base))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) dir(t *testing.T, wdRel string) Location {
	t.Helper()
	loc, err := Dir(Env{
		Getenv:          func(k string) string { return f.env[k] },
		WorkDir:         f.path(wdRel),
		ManagedSettings: f.path("managed-settings.json"),
	})
	if err != nil {
		t.Fatalf("Dir: %v", err)
	}
	return loc
}

func defaultDir(config, root string) string {
	return filepath.Join(config, "projects", SanitizePath(root), "memory")
}

func TestDirDefault(t *testing.T) {
	f := newFixture(t)
	// A real-looking tree: dots, underscores, spaces and capitals in the names.
	f.write(t, "Work Space/my.repo_V2/.git/HEAD", "ref: refs/heads/main\n")
	f.mkdir(t, "Work Space/my.repo_V2/src/deep")
	f.write(t, "Work Space/my.repo_V2/.git/worktrees/feat/commondir", "../..\n")
	f.write(t, "Work Space/my.repo_V2/.git/worktrees/feat/gitdir", "{base}/wt/feat/.git\n")
	f.write(t, "wt/feat/.git", "gitdir: {base}/Work Space/my.repo_V2/.git/worktrees/feat\n")
	f.mkdir(t, "wt/feat/pkg")
	f.mkdir(t, "no git/here")
	long := "deep/" + strings.Repeat("nested_dir.name/", 14) + "proj"
	f.mkdir(t, long)
	if err := os.Symlink(f.path("Work Space/my.repo_V2/src"), f.path("linked")); err != nil {
		t.Fatal(err)
	}

	config := filepath.Join(f.home, ".claude")
	repo := f.path("Work Space/my.repo_V2")
	tests := []struct {
		name, wd, want string
	}{
		{"repo-root", "Work Space/my.repo_V2", defaultDir(config, repo)},
		{"subfolder-finds-git-root", "Work Space/my.repo_V2/src/deep", defaultDir(config, repo)},
		{"worktree-shares-main", "wt/feat", defaultDir(config, repo)},
		{"worktree-subfolder", "wt/feat/pkg", defaultDir(config, repo)},
		{"no-git-launch-dir", "no git/here", defaultDir(config, f.path("no git/here"))},
		{"long-path", long, defaultDir(config, f.path(long))},
		// A shell that cd'd through a symlink: os.Getwd gives the path through it, from $PWD;
		// Claude Code names the project by its physical path.
		{"through-a-symlink", "linked/deep", defaultDir(config, repo)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			loc := f.dir(t, tc.wd)
			if loc.Disabled || loc.Dir != tc.want || loc.Source != "default" {
				t.Errorf("Dir = %+v, want %s from default", loc, tc.want)
			}
			if len(loc.Key) > 200+1+7 {
				t.Errorf("key %d characters long: %s", len(loc.Key), loc.Key)
			}
		})
	}
	if key := f.dir(t, long).Key; len(f.path(long)) <= 200 || !strings.Contains(key[200:], "-") || len(key) <= 200 {
		t.Errorf("long path %d chars gave key %q, want it cut at 200 with a hash", len(f.path(long)), key)
	}
	wantKey := strings.NewReplacer("/", "-", ".", "-", "_", "-", " ", "-").Replace(repo)
	if got := f.dir(t, "Work Space/my.repo_V2").Key; got != wantKey {
		t.Errorf("key = %s, want %s", got, wantKey)
	}
}

func TestDirOverrides(t *testing.T) {
	f := newFixture(t)
	f.write(t, "proj/.git/HEAD", "x")
	f.mkdir(t, "proj/sub")
	proj := f.path("proj")
	cfg := f.path("cfg")
	abs := f.path("mem-abs")

	tests := []struct {
		name     string
		env      map[string]string
		files    map[string]string
		wantDir  string
		wantFrom string
	}{
		{name: "claude-config-dir", env: map[string]string{"CLAUDE_CONFIG_DIR": cfg},
			wantDir: defaultDir(cfg, proj), wantFrom: "default"},
		{name: "remote-memory-dir-base", env: map[string]string{"CLAUDE_CODE_REMOTE_MEMORY_DIR": f.path("remote")},
			wantDir: defaultDir(f.path("remote"), proj), wantFrom: "default"},
		{name: "cairn-memory-dir", env: map[string]string{"CAIRN_MEMORY_DIR": abs, "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": f.path("cowork")},
			wantDir: abs, wantFrom: "CAIRN_MEMORY_DIR"},
		{name: "cairn-memory-dir-relative", env: map[string]string{"CAIRN_MEMORY_DIR": "rel/mem"},
			wantDir: filepath.Join(proj, "sub", "rel", "mem"), wantFrom: "CAIRN_MEMORY_DIR"},
		{name: "cairn-memory-dir-tilde", env: map[string]string{"CAIRN_MEMORY_DIR": "~/m"},
			wantDir: filepath.Join(f.home, "m"), wantFrom: "CAIRN_MEMORY_DIR"},
		{name: "cowork-override", env: map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": f.path("cowork") + "/"},
			files:   map[string]string{"home/.claude/settings.json": `{"autoMemoryDirectory": "/elsewhere/x"}`},
			wantDir: f.path("cowork"), wantFrom: "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"},
		{name: "cowork-relative-ignored", env: map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "rel"},
			wantDir: defaultDir(filepath.Join(f.home, ".claude"), proj), wantFrom: "default"},
		{name: "cowork-tilde-not-expanded", env: map[string]string{"CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "~/x"},
			wantDir: defaultDir(filepath.Join(f.home, ".claude"), proj), wantFrom: "default"},
		{name: "user-setting-absolute",
			files:   map[string]string{"home/.claude/settings.json": `{"autoMemoryDirectory": "` + filepath.ToSlash(abs) + `"}`},
			wantDir: abs, wantFrom: "autoMemoryDirectory in " + filepath.Join(f.home, ".claude", "settings.json")},
		{name: "user-setting-tilde",
			files:   map[string]string{"home/.claude/settings.json": `{"autoMemoryDirectory": "~/notes/mem"}`},
			wantDir: filepath.Join(f.home, "notes", "mem"), wantFrom: "autoMemoryDirectory in " + filepath.Join(f.home, ".claude", "settings.json")},
		{name: "user-setting-under-config-dir", env: map[string]string{"CLAUDE_CONFIG_DIR": cfg},
			files:   map[string]string{"cfg/settings.json": `{"autoMemoryDirectory": "~/c"}`, "home/.claude/settings.json": `{"autoMemoryDirectory": "~/ignored"}`},
			wantDir: filepath.Join(f.home, "c"), wantFrom: "autoMemoryDirectory in " + filepath.Join(cfg, "settings.json")},
		{name: "project-beats-user",
			files: map[string]string{"home/.claude/settings.json": `{"autoMemoryDirectory": "~/user"}`,
				"proj/sub/.claude/settings.json": `{"autoMemoryDirectory": "~/.claude/project"}`},
			wantDir: filepath.Join(f.home, ".claude", "project"), wantFrom: "autoMemoryDirectory in " + filepath.Join(proj, "sub", ".claude", "settings.json")},
		{name: "local-beats-project",
			files: map[string]string{"proj/sub/.claude/settings.json": `{"autoMemoryDirectory": "~/.claude/project"}`,
				"proj/sub/.claude/settings.local.json": `{"autoMemoryDirectory": "~/.claude/local"}`},
			wantDir: filepath.Join(f.home, ".claude", "local"), wantFrom: "autoMemoryDirectory in " + filepath.Join(proj, "sub", ".claude", "settings.local.json")},
		{name: "project-setting-inside-project",
			files:   map[string]string{"proj/sub/.claude/settings.json": `{"autoMemoryDirectory": "` + filepath.ToSlash(filepath.Join(proj, "notes", "memory")) + `"}`},
			wantDir: filepath.Join(proj, "notes", "memory"), wantFrom: "autoMemoryDirectory in " + filepath.Join(proj, "sub", ".claude", "settings.json")},
		{name: "managed-beats-all",
			files: map[string]string{"proj/sub/.claude/settings.local.json": `{"autoMemoryDirectory": "~/local"}`,
				"managed-settings.json": `{"autoMemoryDirectory": "~/policy"}`},
			wantDir: filepath.Join(f.home, "policy"), wantFrom: "autoMemoryDirectory in " + f.path("managed-settings.json")},
		{name: "setting-escape-refused",
			files:   map[string]string{"home/.claude/settings.json": `{"autoMemoryDirectory": "~/../outside"}`},
			wantDir: defaultDir(filepath.Join(f.home, ".claude"), proj), wantFrom: "default"},
		{name: "setting-relative-refused",
			files:   map[string]string{"home/.claude/settings.json": `{"autoMemoryDirectory": "relative/dir"}`},
			wantDir: defaultDir(filepath.Join(f.home, ".claude"), proj), wantFrom: "default"},
		{name: "setting-null-is-unset",
			files: map[string]string{"proj/sub/.claude/settings.json": `{"autoMemoryDirectory": null}`,
				"home/.claude/settings.json": `{"autoMemoryDirectory": "~/user"}`},
			wantDir: filepath.Join(f.home, "user"), wantFrom: "autoMemoryDirectory in " + filepath.Join(f.home, ".claude", "settings.json")},
		{name: "malformed-settings-skipped",
			files: map[string]string{"proj/sub/.claude/settings.json": `{"autoMemoryDirectory": "~/broken"`,
				"home/.claude/settings.json": `{"autoMemoryDirectory": "~/user"}`},
			wantDir: filepath.Join(f.home, "user"), wantFrom: "autoMemoryDirectory in " + filepath.Join(f.home, ".claude", "settings.json")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newFixture(t)
			g.base, g.home = f.base, f.home
			g.env = map[string]string{"HOME": f.home}
			for k, v := range tc.env {
				g.env[k] = v
			}
			for name, content := range tc.files {
				g.write(t, name, content)
			}
			t.Cleanup(func() {
				for name := range tc.files {
					os.Remove(g.path(name))
				}
			})
			loc := g.dir(t, "proj/sub")
			if loc.Disabled || loc.Dir != tc.wantDir || loc.Source != tc.wantFrom {
				t.Errorf("Dir = %+v\nwant dir %s from %s", loc, tc.wantDir, tc.wantFrom)
			}
		})
	}
}

// A repository's own settings cannot send Cairn's memory writes outside the project or the
// user's Claude directory: such a setting turns L2 off with a reason, and a link inside the
// project that leads out counts as outside.
func TestDirProjectSettingConfined(t *testing.T) {
	f := newFixture(t)
	proj := f.path("proj")
	if err := os.MkdirAll(filepath.Join(proj, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.path("outside"), filepath.Join(proj, "linked")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	for _, v := range []string{"~/elsewhere", "/tmp/cairn-planted", filepath.ToSlash(f.path("outside")),
		filepath.ToSlash(filepath.Join(proj, "linked", "memory")), "~/.claude/../evil"} {
		for _, file := range []string{"proj/sub/.claude/settings.json", "proj/sub/.claude/settings.local.json"} {
			g := newFixture(t)
			g.base, g.home = f.base, f.home
			g.env = map[string]string{"HOME": f.home}
			g.write(t, file, `{"autoMemoryDirectory": "`+v+`"}`)
			loc := g.dir(t, "proj/sub")
			os.Remove(g.path(file))
			if !loc.Disabled || !strings.Contains(loc.Reason, "outside the project") || loc.Dir != "" {
				t.Errorf("%s in %s: %+v, want L2 off with a reason", v, file, loc)
			}
		}
	}
	// The same directory from the user's own settings is honoured.
	g := newFixture(t)
	g.base, g.home = f.base, f.home
	g.env = map[string]string{"HOME": f.home}
	g.write(t, "home/.claude/settings.json", `{"autoMemoryDirectory": "~/elsewhere"}`)
	if loc := g.dir(t, "proj/sub"); loc.Disabled || loc.Dir != filepath.Join(f.home, "elsewhere") {
		t.Errorf("user setting: %+v", loc)
	}
}

func TestDirDisabled(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		files   map[string]string
		off     bool
		because string
	}{
		{name: "env-1", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, off: true, because: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "env-true", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "TRUE"}, off: true, because: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "env-disables-every-override", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "yes", "CAIRN_MEMORY_DIR": "/x/y"}, off: true, because: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "bare-mode", env: map[string]string{"CLAUDE_CODE_SIMPLE": "1"}, off: true, because: "--bare"},
		{name: "user-setting-false", files: map[string]string{"home/.claude/settings.json": `{"autoMemoryEnabled": false}`}, off: true, because: "autoMemoryEnabled"},
		{name: "project-setting-false", files: map[string]string{"proj/.claude/settings.json": `{"autoMemoryEnabled": false}`}, off: true, because: "autoMemoryEnabled"},
		{name: "local-true-beats-project-false", files: map[string]string{"proj/.claude/settings.json": `{"autoMemoryEnabled": false}`,
			"proj/.claude/settings.local.json": `{"autoMemoryEnabled": true}`}},
		{name: "env-0-forces-on", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"},
			files: map[string]string{"home/.claude/settings.json": `{"autoMemoryEnabled": false}`}},
		{name: "remote-without-dir", env: map[string]string{"CLAUDE_CODE_REMOTE": "true"}, off: true, because: "remote"},
		{name: "remote-with-dir", env: map[string]string{"CLAUDE_CODE_REMOTE": "true", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"}},
		{name: "env-empty-is-unset", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": ""}},
		// Claude Code applies the settings' env to itself (2.1.330: no memory directory with
		// it in the user's settings): cairn in a shell, without it in its environment, follows.
		{name: "settings-env", files: map[string]string{"home/.claude/settings.json": `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}`},
			off: true, because: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "settings-env-over-shell", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"},
			files: map[string]string{"proj/.claude/settings.json": `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "true"}}`}, off: true, because: "CLAUDE_CODE_DISABLE_AUTO_MEMORY"},
		{name: "local-settings-env-first", files: map[string]string{"proj/.claude/settings.local.json": `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}}`,
			"home/.claude/settings.json": `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, "autoMemoryEnabled": false}`}},
		// Under Claude Code (CLAUDE_PROJECT_DIR set) the environment already is what it applied.
		{name: "settings-env-under-claude", env: map[string]string{"CLAUDE_PROJECT_DIR": "{proj}"},
			files: map[string]string{"home/.claude/settings.json": `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write(t, "proj/.git/HEAD", "x")
			for k, v := range tc.env {
				f.env[k] = strings.ReplaceAll(v, "{proj}", f.path("proj"))
			}
			for name, content := range tc.files {
				f.write(t, name, content)
			}
			loc := f.dir(t, "proj")
			if loc.Disabled != tc.off {
				t.Fatalf("Dir = %+v, want disabled=%v", loc, tc.off)
			}
			if tc.off && (loc.Dir != "" || !strings.Contains(loc.Reason, tc.because)) {
				t.Errorf("disabled location %+v: want no dir and a reason naming %q", loc, tc.because)
			}
			if !tc.off && loc.Dir == "" {
				t.Errorf("enabled location has no dir: %+v", loc)
			}
		})
	}
}

func TestDirCairnMemoryDirRefused(t *testing.T) {
	for _, v := range []string{"//server/share/mem", "~/..", "~/", "/x\x00y"} {
		_, err := Dir(Env{Getenv: func(k string) string {
			return map[string]string{"HOME": "/home/u", "CAIRN_MEMORY_DIR": v}[k]
		}, WorkDir: t.TempDir(), ManagedSettings: "/nonexistent"})
		if err == nil {
			t.Errorf("CAIRN_MEMORY_DIR=%q accepted", v)
		}
	}
}

func TestDirNoHome(t *testing.T) {
	_, err := Dir(Env{Getenv: func(string) string { return "" }, WorkDir: t.TempDir(), ManagedSettings: "/nonexistent"})
	if err == nil {
		t.Fatal("Dir with no HOME and no CLAUDE_CONFIG_DIR: want an error")
	}
}

// A relative HOME, CLAUDE_CONFIG_DIR or CLAUDE_CODE_REMOTE_MEMORY_DIR named a memory directory
// relative to each process's working directory (a hook's, the server's, cairn's in a shell),
// so lines went wherever each ran: it is refused, naming the variable.
func TestDirRelativeBaseRefused(t *testing.T) {
	for _, tc := range []struct{ name, v, want string }{
		{"HOME", ".", `HOME="."`},
		{"CLAUDE_CONFIG_DIR", "rel/dir", `CLAUDE_CONFIG_DIR="rel/dir"`},
		{"CLAUDE_CODE_REMOTE_MEMORY_DIR", "rel", `CLAUDE_CODE_REMOTE_MEMORY_DIR="rel"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"HOME": "/home/u", tc.name: tc.v}
			loc, err := Dir(Env{Getenv: func(k string) string { return env[k] }, WorkDir: t.TempDir(), ManagedSettings: "/nonexistent"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "absolute") {
				t.Fatalf("Dir = %+v, %v; want an error naming %s and asking for an absolute path", loc, err, tc.want)
			}
		})
	}
}

// A relative HOME or CLAUDE_CONFIG_DIR names no settings of the user's either: read relative to
// wherever the process ran (a subdirectory's .claude/settings.json, say), a file there was taken
// for the user's settings, its autoMemoryDirectory trusted as the user's own (no check that it
// stays in the project), so one process wrote L2 lines where another never looks.
func TestDirRelativeConfigDirReadsNoSettings(t *testing.T) {
	for _, tc := range []struct{ name, v, settings string }{
		{"HOME", ".", ".claude/settings.json"},
		{"CLAUDE_CONFIG_DIR", "rel/dir", "rel/dir/settings.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd, elsewhere := t.TempDir(), t.TempDir()
			p := filepath.Join(cwd, filepath.FromSlash(tc.settings))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(`{"autoMemoryDirectory": `+strconv.Quote(elsewhere)+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Chdir(cwd)
			env := map[string]string{"HOME": "/home/u", tc.name: tc.v}
			loc, err := Dir(Env{Getenv: func(k string) string { return env[k] }, WorkDir: t.TempDir(), ManagedSettings: "/nonexistent"})
			if err == nil || loc.Dir != "" {
				t.Fatalf("Dir = %+v, %v; want the relative %s refused, %s not read", loc, err, tc.name, tc.settings)
			}
		})
	}
}
