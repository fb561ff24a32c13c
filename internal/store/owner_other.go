//go:build !unix

package store

import "os"

// OwnerUID: Windows grants writes by ACL, not by owner; a failed write reports itself.
func OwnerUID(os.FileInfo) (uid int, ok bool) { return 0, false }
