//go:build linux && !(amd64 || 386 || arm || arm64 || loong64 || mips64 || mips64le || riscv64 || s390x)

package memory

// sysRenameat2 < 0: exchange is not wired up here and replace falls back to a rename.
const sysRenameat2 = -1
