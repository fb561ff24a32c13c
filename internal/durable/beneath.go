package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrLinkedComponent: a directory between the project root and a file Cairn writes is a
// symlink (a repository that commits .claude -> /elsewhere), so following it would write
// outside the project.
var ErrLinkedComponent = errors.New("is a symlink; Cairn does not follow links between the project root and its files, so nothing is written outside the project")

// Beneath reports whether target lies inside root (or is root), both cleaned absolute paths.
func Beneath(root, target string) bool {
	rel, err := filepath.Rel(root, target)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// CheckBeneath refuses a path one of whose components below root is a symlink (the last
// one included) or not a directory where a directory must be. Missing components are fine:
// nothing is created. target outside root is not checked (the caller chose it explicitly).
func CheckBeneath(root, target string) error {
	_, err := walkBeneath(root, target, false, 0)
	return err
}

// MkdirBeneath creates target and its missing parents below root (perm, each parent synced)
// without following a symlink at any component: a component that is a symlink, or not a
// directory, is refused with ErrLinkedComponent or ErrNotRegular. It reports whether it
// created anything. A target outside root is made with MkdirAll (the caller chose it).
func MkdirBeneath(root, target string, perm fs.FileMode) (created bool, err error) {
	return walkBeneath(root, target, true, perm)
}

func walkBeneath(root, target string, create bool, perm fs.FileMode) (created bool, err error) {
	root, target = filepath.Clean(root), filepath.Clean(target)
	if root == "" || !filepath.IsAbs(root) || !Beneath(root, target) {
		if !create {
			return false, nil
		}
		if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
			created = true
		}
		return created, MkdirAll(target, perm)
	}
	rel, _ := filepath.Rel(root, target)
	if rel == "." {
		return false, nil
	}
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return false, nil
		}
		if err := MkdirAll(root, perm); err != nil {
			return false, err
		}
		created = true
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		parent := cur
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return created, &fs.PathError{Op: "open", Path: cur, Err: ErrLinkedComponent}
		case err == nil && !fi.IsDir() && cur != target:
			return created, &fs.PathError{Op: "open", Path: cur, Err: fmt.Errorf("%w: a directory belongs here", ErrNotRegular)}
		case err == nil:
			continue
		case !errors.Is(err, fs.ErrNotExist):
			return created, err
		case !create:
			return false, nil // nothing further down exists
		}
		// os.Mkdir does not follow a symlink at its last component: a link planted since the
		// Lstat makes it fail with EEXIST, and the Lstat below sees the link.
		if err := os.Mkdir(cur, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return created, err
		}
		if fi, err := os.Lstat(cur); err != nil {
			return created, err
		} else if !fi.IsDir() {
			return created, &fs.PathError{Op: "open", Path: cur, Err: ErrLinkedComponent}
		}
		created = true
		if err := SyncDir(parent); err != nil {
			return created, err
		}
	}
	return created, nil
}
