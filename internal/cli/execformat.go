package cli

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"io"
	"os"
	"runtime"
)

// foreignBinary says what the executable at p is when it is for another OS or CPU than this
// machine ("a darwin/arm64 binary"), read from its ELF, Mach-O or PE header; "" when it is
// for this machine, or when its format is none of those (a script, an unreadable file: the
// other checks say what is wrong with it).
func foreignBinary(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return ""
	}
	goos, goarch := "", ""
	switch {
	case string(magic[:]) == elf.ELFMAG:
		ef, err := elf.NewFile(f)
		if err != nil {
			return ""
		}
		goos, goarch = elfOS(ef.OSABI), elfArch(ef)
	case string(magic[:2]) == "MZ":
		pf, err := pe.NewFile(f)
		if err != nil {
			return ""
		}
		goos = "windows"
		goarch = map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64",
			pe.IMAGE_FILE_MACHINE_I386: "386", pe.IMAGE_FILE_MACHINE_ARMNT: "arm"}[pf.Machine]
	default:
		mf, err := macho.NewFile(f)
		if err != nil {
			return ""
		}
		goos = "darwin"
		goarch = map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64", macho.Cpu386: "386", macho.CpuArm: "arm"}[mf.Cpu]
	}
	if goarch == "" {
		goarch = "unknown CPU"
	}
	sameOS := goos == runtime.GOOS || goos == "darwin" && runtime.GOOS == "ios" ||
		// Go marks only FreeBSD's ELF binaries: the others' say nothing, and pass for this OS.
		goos == "" && runtime.GOOS != "darwin" && runtime.GOOS != "ios" && runtime.GOOS != "windows"
	if sameOS && goarch == runtime.GOARCH {
		return ""
	}
	if goos == "" {
		return "an ELF binary for " + goarch + " (Linux or another Unix)"
	}
	return "a " + goos + "/" + goarch + " binary"
}

// elfOS is the GOOS an ELF binary names in its header, "" when it names none (Linux and most
// others).
func elfOS(abi elf.OSABI) string {
	switch abi {
	case elf.ELFOSABI_FREEBSD:
		return "freebsd"
	case elf.ELFOSABI_NETBSD:
		return "netbsd"
	case elf.ELFOSABI_OPENBSD:
		return "openbsd"
	case elf.ELFOSABI_SOLARIS:
		return "solaris"
	}
	return ""
}

// elfArch is the GOARCH of an ELF binary's machine, "" for one Go does not build for.
func elfArch(f *elf.File) string {
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64"
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_386:
		return "386"
	case elf.EM_ARM:
		return "arm"
	case elf.EM_RISCV:
		return "riscv64"
	case elf.EM_LOONGARCH:
		return "loong64"
	case elf.EM_S390:
		return "s390x"
	case elf.EM_PPC64:
		if f.Data == elf.ELFDATA2LSB {
			return "ppc64le"
		}
		return "ppc64"
	case elf.EM_MIPS:
		arch := "mips"
		if f.Class == elf.ELFCLASS64 {
			arch += "64"
		}
		if f.Data == elf.ELFDATA2LSB {
			arch += "le"
		}
		return arch
	}
	return ""
}
