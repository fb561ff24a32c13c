package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/vars"
)

// pluginIDChars are the characters Claude Code turns into '-' when it names a plugin's data
// directory after its id (cairn@cairn -> cairn-cairn).
var pluginIDChars = lazyre.New(`[^a-zA-Z0-9_-]`)

// installedPlugin finds Cairn through Claude Code's own plugin records: an installation of a
// cairn@<marketplace> plugin whose directory holds .claude-plugin/, preferring one installed
// for this project over a user-wide one. bin is where its binaries are: the plugin's bin/
// when it has them (a checkout built with make), else the launcher's build or download in
// the plugin's data directory (plugins/data/<id>/bin-<version>). goos is the system the
// binaries are for (their names end in .exe on Windows).
func installedPlugin(getenv func(string) string, home, projectDir, goos string) (root, bin, how string) {
	dir := pluginsDir(getenv, home)
	if dir == "" {
		return
	}
	recs := project.InstalledPlugins(dir)
	if recs == nil {
		return
	}
	best := 0
	for _, id := range slices.Sorted(maps.Keys(recs)) {
		if !strings.HasPrefix(id, "cairn@") {
			continue
		}
		for _, in := range recs[id] {
			if in.InstallPath == "" || !dirExists(filepath.Join(in.InstallPath, ".claude-plugin")) {
				continue
			}
			rank := in.Rank(projectDir)
			if rank <= best {
				continue
			}
			best = rank
			root = in.InstallPath
			bin = filepath.Join(root, "bin")
			if !fileExists(filepath.Join(bin, engine.Exe(goos, "cairn-mcp"))) {
				bin = dataSet(dir, id, root)
			}
			how = fmt.Sprintf("from Claude Code's installed_plugins.json: %s, %s scope", id, in.Scope)
		}
	}
	return root, bin, how
}

// dataSet is the set the launcher installs for the plugin id installed at root, in the plugin
// directory dir: Claude Code's data directory for the id, bin-VERSION in it.
func dataSet(dir, id, root string) string {
	return filepath.Join(dir, "data", pluginIDChars().ReplaceAllString(id, "-"), "bin-"+launchVersion(root))
}

// recordedDataSet is dataSet for the installation at root that Claude Code's records name;
// "" when none does. The records may spell root through a linked ~/.claude.
func recordedDataSet(getenv func(string) string, home, root string) string {
	dir := pluginsDir(getenv, home)
	if dir == "" {
		return ""
	}
	recs := project.InstalledPlugins(dir)
	for _, id := range slices.Sorted(maps.Keys(recs)) {
		for _, in := range recs[id] {
			if strings.HasPrefix(id, "cairn@") && in.InstallPath != "" && sameSet(in.InstallPath, root) {
				return dataSet(dir, id, root)
			}
		}
	}
	return ""
}

// launchVersion is the version hooks/launch names the plugin's set after.
var launchVersion = project.LaunchVersion

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// linkPath is the link doctor --link makes: ~/.local/bin/cairn, cairn.exe on Windows, where
// cmd, PowerShell and Go's LookPath find a program only by a PATHEXT extension.
func linkPath(home, goos string) string {
	return filepath.Join(home, ".local", "bin", engine.Exe(goos, "cairn"))
}

// linkCheck says where this cairn is and whether `cairn` on PATH is it; with link it makes
// linkPath a symbolic link to it (never without being asked). goos is the system it runs on.
func (a *app) linkCheck(link bool, goos string) engine.Check {
	exe, err := a.executable()
	if err == nil {
		if p, err := filepath.EvalSymlinks(exe); err == nil {
			exe = p
		}
	}
	home := a.home()
	dest := linkPath(home, goos)
	if err != nil || exe == "" {
		if link {
			if home == "" {
				dest = anyPathDir
			} else {
				dest = vars.Quote(dest)
			}
			return engine.Check{Name: "cairn on PATH", Detail: "where this cairn is cannot be told, so no link was made", Fix: "ln -s PATH/TO/cairn " + dest}
		}
		return engine.Check{Name: "cairn on PATH", OK: true, Detail: "not needed: the plugin runs its binaries by their paths (where this cairn is cannot be told)"}
	}
	if link {
		if home == "" {
			return engine.Check{Name: "cairn on PATH", Detail: "no home directory to link from", Fix: "ln -s " + vars.Quote(exe) + " " + anyPathDir}
		}
		elsewhere := "link this cairn from another directory on your PATH: ln -s " + vars.Quote(exe) + " DIR/cairn"
		// A link of the user's to another program called cairn is theirs, as uninstall tells.
		if t, err := os.Readlink(dest); err == nil && len(cairnLinks(home, exe, goos)) == 0 {
			what := ", another program than Cairn"
			if _, err := os.Stat(dest); errors.Is(err, fs.ErrNotExist) {
				what = ", which is not there and not Cairn's"
			}
			return engine.Check{Name: "cairn on PATH", Detail: dest + " links to " + t + what + "; Cairn leaves it alone", Fix: elsewhere}
		}
		_, recorded, _ := a.recordedPlugin(goos)
		target, note := stableCairn(exe, recorded, goos)
		if err := makeLink(target, dest); err != nil {
			fix := "ln -sf " + vars.Quote(target) + " " + vars.Quote(dest)
			if errors.Is(err, errNotLink) {
				// ln -sf would replace the user's file: point elsewhere instead.
				fix = elsewhere
			}
			return engine.Check{Name: "cairn on PATH", Detail: err.Error(), Fix: fix}
		}
		detail := dest + " -> " + target + note
		if !onPath(filepath.Dir(dest), a.getenv("PATH")) {
			detail += "; add " + filepath.Dir(dest) + " to PATH"
		}
		return engine.Check{Name: "cairn on PATH", OK: true, Detail: detail}
	}
	found, err := exec.LookPath("cairn")
	if err == nil {
		if p, err := filepath.EvalSymlinks(found); err == nil && p == exe {
			return engine.Check{Name: "cairn on PATH", OK: true, Detail: found + " is this cairn"}
		}
		return engine.Check{Name: "cairn on PATH", OK: true, Detail: fmt.Sprintf("%s is another cairn than this one (%s); to link %s", found, exe, linkStep(exe, home, goos))}
	}
	// The link doctor --link made names a cairn that is gone (the set of the version before an
	// update, which the launcher removes a day later): typing cairn fails until it is relinked.
	if t, err := os.Readlink(dest); err == nil && home != "" && !fileExists(dest) {
		gone := ", which is not there"
		// Through DATA/cairn, which is there: what is not is the set it names.
		if m := missingLink(dest); m != "" && m != t && m != filepath.Join(filepath.Dir(dest), t) {
			gone = ", whose " + m + " is not there"
		}
		return engine.Check{Name: "cairn on PATH", Detail: dest + " links to " + t + gone, Fix: vars.Quote(exe) + " doctor --link"}
	}
	// The link doctor --link made is there and runs this cairn: PATH lacks its directory, which
	// another --link would not change.
	if p, err := filepath.EvalSymlinks(dest); err == nil && home != "" && p == exe {
		return engine.Check{Name: "cairn on PATH", OK: true, Detail: "not needed: the plugin runs its binaries by their paths; to type cairn in a shell, add " + filepath.Dir(dest) + " to PATH (" + dest + " links to this one)"}
	}
	// Passes: only a person at a shell needs cairn on PATH, so the line says so first. The
	// command is run by this cairn's path: a bare cairn is not found, or is another one.
	return engine.Check{Name: "cairn on PATH", OK: true, Detail: "not needed: the plugin runs its binaries by their paths; to type cairn in a shell, link " + linkStep(exe, home, goos)}
}

// stableCairn is what doctor --link links to: for a cairn in the launcher's set
// (DATA/bin-VERSION), DATA/cairn, a path each install points at the set it installed
// (cairn_settle in hooks/install), so the link runs the current version after an update;
// otherwise exe. A DATA/cairn that leads elsewhere (its set removed a day after an update, or
// an older version's) is pointed at exe first, as an install would: linked to exe's set instead,
// the link would dangle once an update removed it. One naming a newer version's set is left so,
// unless exe's set is recorded, the one Claude Code's records say is installed (the plugin was
// put back to an older version). One that is not the launcher's (launcherLink) is left as it
// is: note says why the link goes to exe. Not on Windows, where the launcher makes none.
func stableCairn(exe, recorded, goos string) (target, note string) {
	dir := filepath.Dir(exe)
	if goos == "windows" || !strings.HasPrefix(filepath.Base(dir), "bin-") {
		return exe, ""
	}
	data := filepath.Dir(dir)
	stable := filepath.Join(data, "cairn")
	if p, err := filepath.EvalSymlinks(stable); err == nil && p == exe {
		return stable, ""
	}
	_, err := os.Lstat(stable)
	switch {
	case err == nil && !launcherLink(stable):
		return exe, "; " + stable + " is not the launcher's link, so this one does not follow updates"
	case err != nil || !fileExists(filepath.Join(dir, ".checksums")):
		// None there (an install older than DATA/cairn), or exe is in no set an install made.
		return exe, ""
	}
	// A newer version's set stays named (an install keeps DATA/cairn on the newest): pointed
	// back at this older one, which that version's install removes a day later, it dangles.
	// Not once the plugin is this older version again: no install of the newer one runs.
	if p, err := filepath.EvalSymlinks(stable); err == nil && (recorded == "" || !sameSet(recorded, dir)) {
		if set := filepath.Dir(p); filepath.Dir(set) == data && fileExists(filepath.Join(set, ".checksums")) &&
			newerVersion(strings.TrimPrefix(filepath.Base(set), "bin-"), strings.TrimPrefix(filepath.Base(dir), "bin-")) {
			return stable, "; " + stable + " runs " + p + ", the newest version installed"
		}
	}
	// Made aside and renamed over: never missing. Aside under a name of its own: under the
	// install's (.cairn-link), an install at once removed or renamed doctor's link, or doctor
	// the install's. An install of a newer version at once may rename its link in just before
	// this one: doctor looks again after its rename, as the install does, and leaves DATA/cairn
	// on the newest set (unless exe's is the one recorded), in bounded rounds.
	aside := filepath.Join(data, doctorLinkAside)
	back := recorded != "" && sameSet(recorded, dir)
	to := dir
	for range 4 {
		_ = os.Remove(aside)
		if err := os.Symlink(filepath.Join(filepath.Base(to), filepath.Base(exe)), aside); err != nil {
			break
		}
		beforeLinkRename()
		if err := os.Rename(aside, stable); err != nil {
			_ = os.Remove(aside)
			break
		}
		newest := to
		if !back {
			newest = newestSet(data, to)
		}
		if p, err := filepath.EvalSymlinks(stable); err == nil && newest == to && p == filepath.Join(to, filepath.Base(exe)) {
			if to == dir {
				return stable, ""
			}
			return stable, "; " + stable + " runs " + p + ", the newest version installed"
		}
		to = newest
	}
	// Rounds spent against another's renames: DATA/cairn names a set that is there, which the
	// install keeps on the newest.
	if p, err := filepath.EvalSymlinks(stable); err == nil && to != dir {
		return stable, "; " + stable + " runs " + p + ", the newest version installed"
	}
	return exe, ""
}

// sameSet reports whether a and b name one set of binaries however each is spelled: Claude
// Code's records name it through the home it was given (a ~/.claude that links elsewhere, say),
// this cairn's path is read through every link.
func sameSet(a, b string) bool {
	return filepath.Clean(a) == filepath.Clean(b) || durable.SameDir(a, b)
}

// beforeLinkRename is where a test has another install run, between doctor's link made aside
// and its rename.
var beforeLinkRename = func() {}

// launcherLink: path, a data directory's cairn, is the link hooks/install and doctor --link
// make there: to bin-VERSION/cairn beside it. Anything else there (a file, a link elsewhere, in
// a CLAUDE_PLUGIN_DATA of the user's) is not Cairn's.
func launcherLink(path string) bool {
	t, err := os.Readlink(path)
	set, name, _ := strings.Cut(t, string(filepath.Separator))
	return err == nil && strings.HasPrefix(set, "bin-") && name == "cairn"
}

// doctorLinkAside is where doctor --link makes DATA/cairn's link before renaming it over
// (stableCairn); hooks/install makes its own as .cairn-link.
const doctorLinkAside = ".cairn-link-doctor"

// newestSet is the launcher's set in data of the latest version, than (a set's directory)
// when none is later: one an install stamped (.checksums) holding cairn, as hooks/install's
// cairn_settle chooses the set DATA/cairn names.
func newestSet(data, than string) string {
	sets, _ := filepath.Glob(filepath.Join(data, "bin-*"))
	for _, s := range sets {
		if strings.HasSuffix(s, ".tmp") || !fileExists(filepath.Join(s, ".checksums")) || !fileExists(filepath.Join(s, "cairn")) {
			continue
		}
		if newerVersion(strings.TrimPrefix(filepath.Base(s), "bin-"), strings.TrimPrefix(filepath.Base(than), "bin-")) {
			than = s
		}
	}
	return than
}

// newerVersion reports whether version a is later than b, as hooks/install's cairn_newer
// decides which set DATA/cairn names: MAJOR.MINOR.PATCH, a -pre-release before its release,
// build metadata ignored; what is not a number counts as 0 ("dev" is older than any release).
func newerVersion(a, b string) bool {
	a, _, _ = strings.Cut(a, "+")
	b, _, _ = strings.Cut(b, "+")
	ra, _, preA := strings.Cut(a, "-")
	rb, _, preB := strings.Cut(b, "-")
	fa, fb := strings.Split(ra, "."), strings.Split(rb, ".")
	for i := range max(len(fa), len(fb)) {
		x, y := versionField(fa, i), versionField(fb, i)
		if x != y {
			return x > y
		}
	}
	return !preA && preB
}

// versionField is field i of a version's dot-separated numbers, 0 when it is missing or no
// number of at most eight digits (cairn_newer's test compares no more).
func versionField(f []string, i int) int {
	if i >= len(f) || len(f[i]) == 0 || len(f[i]) > 8 {
		return 0
	}
	n := 0
	for _, c := range f[i] {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// missingLink: the path a chain of links from p ends at that is not there ("" when the chain
// ends at a file, or cannot be followed).
func missingLink(p string) string {
	for range 40 {
		t, err := os.Readlink(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return p
			}
			return ""
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
	return ""
}

// linkStep ends "link ...": what to link and the one command that does, doctor --link run by
// this cairn's path; without a home directory, where doctor --link has no ~/.local/bin to link
// from, the link itself.
func linkStep(exe, home, goos string) string {
	if home == "" {
		return "this one: ln -s " + vars.Quote(exe) + " " + anyPathDir
	}
	return "~/.local/bin/" + engine.Exe(goos, "cairn") + " to this one: " + vars.Quote(exe) + " doctor --link"
}

// anyPathDir is where a link goes when Cairn cannot name the directory.
const anyPathDir = "DIR/cairn, DIR a directory on your PATH"

// errNotLink: makeLink found something other than a link where the link goes.
var errNotLink = errors.New("exists and is not a link; Cairn leaves it alone")

// makeLink points dest at target, replacing only an earlier link (never a file).
func makeLink(target, dest string) error {
	if fi, err := os.Lstat(dest); err == nil {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return fmt.Errorf("%s %w", dest, errNotLink)
		}
		if t, _ := os.Readlink(dest); t == target {
			return nil
		}
		if err := os.Remove(dest); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, dest)
}

func onPath(dir, path string) bool {
	return slices.ContainsFunc(filepath.SplitList(path), func(d string) bool { return filepath.Clean(d) == filepath.Clean(dir) })
}
