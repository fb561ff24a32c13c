//go:build !linux && !darwin

package durable

import "os"

func renameNoReplace(root *os.Root, oldname, newname string) error {
	return renameLinked(root, oldname, newname)
}
