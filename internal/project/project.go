// Package project finds where a Claude Code session's project lives on disk: the project root
// (the nearest ancestor holding .git), Cairn's state directory under it, and the main
// repository's root that Claude Code keys its auto-memory on.
//
// Everything here is a pure function of a passed-in environment (a getenv function and a
// working directory) plus lstat and small reads of the file system. It never starts a git
// process and never creates anything: the store creates the state directory, the memory
// package the memory directory.
package project

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/durable"
)

// Environment variables read here.
const (
	EnvProjectDir = "CLAUDE_PROJECT_DIR" // the directory Claude Code was launched in
	EnvStateDir   = "CAIRN_STATE_DIR"    // moves Cairn's state directory
)

// StateSubdir is the state directory's place under the project root.
var StateSubdir = filepath.Join(".claude", "cairn")

// maxGitFile bounds what is read from a .git, commondir or gitdir file: they hold one path.
const maxGitFile = 64 << 10

// LaunchDir is the directory the session started in: $CLAUDE_PROJECT_DIR if set (a relative
// value is taken against wd), else wd. The result is absolute and clean.
func LaunchDir(getenv func(string) string, wd string) (string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	start := cmp.Or(getenv(EnvProjectDir), wd)
	if start == "" {
		return "", errors.New("finding the project: no working directory and CLAUDE_PROJECT_DIR is unset")
	}
	if !filepath.IsAbs(start) && !filepath.IsAbs(wd) {
		return "", fmt.Errorf("finding the project: %q is relative and the working directory %q is not absolute", start, wd)
	}
	return resolveFrom(wd, start), nil
}

// Root returns the project root: the nearest ancestor of the launch directory (itself
// included) that holds .git, a directory in a plain clone or a file in a worktree or
// submodule, else the launch directory itself. A subfolder finds the same root; each git
// worktree is its own root.
func Root(getenv func(string) string, wd string) (string, error) {
	f, err := Find(getenv, wd)
	return f.Root, err
}

// Found is a project as one walk up from its launch directory finds it: each .git on the way
// is looked at once, and what Root, HasGit and GitCommonRoot would each look at again is kept.
type Found struct {
	Launch string // LaunchDir
	Root   string // Root
	InGit  bool   // HasGit(Root): Root is a git repository's, not the launch directory for want of one
	common string // GitCommonRoot when the walk knows it already (no git, or a .git directory); "" to look
}

// Find walks up from the launch directory once (see Root).
func Find(getenv func(string) string, wd string) (Found, error) {
	start, err := LaunchDir(getenv, wd)
	if err != nil {
		return Found{}, err
	}
	root, dir := gitRootKind(start)
	f := Found{Launch: start, Root: cmp.Or(root, start), InGit: root != ""}
	switch {
	case root == "":
		f.common = start
	case dir:
		f.common = root // a .git directory: the main checkout already (canonicalRoot)
	}
	return f, nil
}

// CommonRoot is GitCommonRoot for the project f.
func (f Found) CommonRoot() string {
	if f.common != "" {
		return f.common
	}
	return canonicalRoot(f.Root)
}

// StateDir returns Cairn's state directory: $CAIRN_STATE_DIR if set (a relative value is
// taken against the project root), else <root>/.claude/cairn. It does not create it.
func StateDir(getenv func(string) string, wd string) (string, error) {
	return stateDir(getenv, wd, func() (string, error) { return Root(getenv, wd) })
}

// stateDir is StateDir with the project root from root, asked only without CAIRN_STATE_DIR.
func stateDir(getenv func(string) string, wd string, root func() (string, error)) (string, error) {
	if getenv != nil {
		if d := getenv(EnvStateDir); d != "" {
			if filepath.IsAbs(d) {
				return filepath.Clean(d), nil
			}
			// Against the project root, as the default is: taken against the working
			// directory, the agent's cairn in a subdirectory had a state of its own, apart
			// from the one the hooks and the MCP server (in the launch directory) keep.
			r, err := root()
			if err != nil {
				return "", err
			}
			return filepath.Join(r, d), nil
		}
	}
	r, err := root()
	if err != nil {
		return "", err
	}
	return filepath.Join(r, StateSubdir), nil
}

// StateDirOf is StateDir for the project f, found already.
func StateDirOf(getenv func(string) string, wd string, f Found) (string, error) {
	return stateDir(getenv, wd, func() (string, error) { return f.Root, nil })
}

// GitCommonRoot returns the root Claude Code keys a project's auto-memory on: the git root of
// the launch directory, except that for a linked worktree it is the main repository's root
// (so every worktree shares one memory), and outside git the launch directory itself. The
// worktree is recognised by reading its .git file ("gitdir: <main>/.git/worktrees/<name>"),
// that directory's commondir file and its gitdir back-link, with the same checks Claude Code
// makes; anything that does not check out leaves the worktree as its own root, as Claude
// Code does.
func GitCommonRoot(getenv func(string) string, wd string) (string, error) {
	f, err := Find(getenv, wd)
	if err != nil {
		return "", err
	}
	return f.CommonRoot(), nil
}

// gitRoot walks up from dir to the first directory holding a .git directory or file; "" when
// none does.
func gitRoot(dir string) string {
	root, _ := gitRootKind(dir)
	return root
}

// gitRootKind is gitRoot, and whether the .git it found is a directory (or a symlink to one).
func gitRootKind(dir string) (root string, isDir bool) {
	for {
		if has, isDir := gitKind(dir); has {
			return dir, isDir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// HasGit reports whether dir/.git is a directory or a regular file. A symlink counts when
// it leads to one of those, as it does for git. Root is such a directory unless it is the
// launch directory for want of one.
func HasGit(dir string) bool {
	has, _ := gitKind(dir)
	return has
}

// gitKind is HasGit, and whether dir/.git is a directory (or a symlink to one).
func gitKind(dir string) (has, isDir bool) {
	p := filepath.Join(dir, ".git")
	fi, err := os.Lstat(p)
	if err != nil {
		return false, false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = os.Stat(p); err != nil {
			return false, false
		}
	}
	return fi.IsDir() || fi.Mode().IsRegular(), fi.IsDir()
}

// canonicalRoot maps a worktree root to its main repository's root; any other root, and any
// worktree whose files do not check out, maps to itself.
func canonicalRoot(root string) string {
	gitFile := filepath.Join(root, ".git")
	fi, err := os.Lstat(gitFile)
	if err != nil || !fi.Mode().IsRegular() {
		return root // a .git directory: the main checkout already
	}
	line, ok := readSmall(gitFile)
	rest, isGitdir := strings.CutPrefix(line, "gitdir:")
	if !ok || !isGitdir {
		return root
	}
	gitdir := resolveFrom(root, strings.TrimSpace(rest))

	commonDir, ok := CommonDir(gitdir)
	if !ok {
		return root // a submodule: its git dir has no commondir, it is its own root
	}
	// A linked worktree's git dir is <common>/worktrees/<name>.
	if filepath.Dir(gitdir) != filepath.Join(commonDir, "worktrees") {
		return root
	}
	// The back-link must point at this checkout's .git file, or the gitdir line is stale or
	// borrowed and this checkout is on its own.
	if back, ok := readSmall(filepath.Join(gitdir, "gitdir")); !ok || !samePath(resolveFrom(gitdir, back), gitFile) {
		return root
	}
	if filepath.Base(commonDir) != ".git" {
		// A bare main repository: its directory is the root, unless it holds a .git of its own.
		if HasGit(commonDir) {
			return root
		}
		return commonDir
	}
	return filepath.Dir(commonDir)
}

// Bare reports whether dir is a bare git repository's directory, a git directory with no work
// tree, as git recognises one: a HEAD file beside objects/ and refs/ directories.
func Bare(dir string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil || fi.IsDir() != (p != "HEAD") {
			return false
		}
	}
	return true
}

// HasLinkedWorktrees reports whether root, a main checkout (root/.git a directory) or a bare
// repository's directory, has a linked worktree: an entry of its git directory's worktrees/
// whose commondir file leads back to that git directory. A directory that merely holds a
// folder named worktrees has none. At most maxWorktrees entries are looked at.
func HasLinkedWorktrees(root string) bool {
	gitDir := filepath.Join(root, ".git")
	if fi, err := os.Stat(gitDir); err != nil || !fi.IsDir() {
		gitDir = root
	}
	f, err := os.Open(filepath.Join(gitDir, "worktrees"))
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxWorktrees)
	for _, n := range names {
		if common, ok := CommonDir(filepath.Join(gitDir, "worktrees", n)); ok && samePath(common, gitDir) {
			return true
		}
	}
	return false
}

// maxWorktrees bounds the entries HasLinkedWorktrees reads.
const maxWorktrees = 256

// GitDir finds the work tree holding dir, the first directory at or above it with a .git,
// and its git directory: that .git directory, or where a linked worktree's or a submodule's
// .git file ("gitdir: <path>") points. ok is false when no work tree holds dir; gitDir is ""
// when one does but its .git file does not read as one.
func GitDir(dir string) (tree, gitDir string, ok bool) {
	tree = gitRoot(dir)
	if tree == "" {
		return "", "", false
	}
	p := filepath.Join(tree, ".git")
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return tree, p, true
	}
	line, read := readSmall(p)
	rest, isGitdir := strings.CutPrefix(line, "gitdir:")
	if !read || !isGitdir {
		return tree, "", true
	}
	return tree, resolveFrom(tree, strings.TrimSpace(rest)), true
}

// CommonDir is the git directory holding the refs of the one at gitDir: a linked worktree's
// main git directory (its commondir file); ok is false when gitDir has no commondir file.
func CommonDir(gitDir string) (string, bool) {
	common, ok := readSmall(filepath.Join(gitDir, "commondir"))
	if !ok {
		return "", false
	}
	return resolveFrom(gitDir, common), true
}

// readSmall reads a regular, non-symlinked file of at most maxGitFile bytes, trimmed.
func readSmall(p string) (string, bool) {
	b, err := durable.ReadPath(p, maxGitFile, false)
	return strings.TrimSpace(string(b)), err == nil
}

// resolveFrom is p taken against base, a directory; an empty p is base itself (filepath.Join
// drops it and cleans base).
func resolveFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// samePath compares two paths after resolving symlinks, falling back to the clean paths.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// CacheDir is the launcher's own directory outside Claude Code, ${XDG_CACHE_HOME:-HOME/.cache}/cairn,
// or "" when neither gives an absolute path. A relative XDG_CACHE_HOME is ignored, as the XDG
// spec says and hooks/launch does, so every reader finds the directory the launcher used.
func CacheDir(getenv func(string) string, home string) string {
	cache := getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(cache) && home != "" {
		cache = filepath.Join(home, ".cache")
	}
	if !filepath.IsAbs(cache) {
		return ""
	}
	return filepath.Join(cache, "cairn")
}
