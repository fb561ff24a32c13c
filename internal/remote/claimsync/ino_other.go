//go:build !unix

package claimsync

// dirIno is 0 where a directory's inode cannot be read: the identity is bound by path alone.
func dirIno(string) uint64 { return 0 }
