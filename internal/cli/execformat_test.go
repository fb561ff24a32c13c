package cli

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestForeignBinary: the executable formats are read from their headers; this machine's
// binaries and scripts pass, another CPU's or OS's are named.
func TestForeignBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	elfFor := func(m elf.Machine) []byte {
		var b bytes.Buffer
		h := elf.Header64{Type: uint16(elf.ET_EXEC), Machine: uint16(m), Version: 1, Ehsize: 64}
		copy(h.Ident[:], elf.ELFMAG)
		h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
		binary.Write(&b, binary.LittleEndian, h)
		return b.Bytes()
	}
	other, otherArch := elf.EM_AARCH64, "arm64"
	if runtime.GOARCH == "arm64" {
		other, otherArch = elf.EM_X86_64, "amd64"
	}
	if got := foreignBinary(write("elf-other", elfFor(other))); !strings.Contains(got, otherArch) {
		t.Errorf("an ELF binary for %s: %q", otherArch, got)
	}
	var mach bytes.Buffer
	binary.Write(&mach, binary.LittleEndian, macho.FileHeader{Magic: macho.Magic64, Cpu: macho.CpuArm64, Type: macho.TypeExec})
	mach.Write(make([]byte, 4)) // the 64-bit header's reserved word
	if got, want := foreignBinary(write("macho", mach.Bytes())), "a darwin/arm64 binary"; (got == "") != (runtime.GOOS == "darwin" && runtime.GOARCH == "arm64") || got != "" && got != want {
		t.Errorf("a darwin/arm64 binary: %q", got)
	}
	if runtime.GOOS == "linux" {
		native := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
		if native != 0 {
			if got := foreignBinary(write("elf-native", elfFor(native))); got != "" {
				t.Errorf("an ELF binary for this machine: %q", got)
			}
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{self, write("script", []byte("#!/bin/sh\n")), write("empty", nil), filepath.Join(dir, "missing")} {
		if got := foreignBinary(p); got != "" {
			t.Errorf("%s: %q, want it to pass", p, got)
		}
	}
}
