package store

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// MaxNameLen is the longest name, in bytes.
const MaxNameLen = 64

// NameError refuses a document, checkpoint, log or workflow id name.
type NameError struct {
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	// The name itself is never repeated: a refused value may be a secret pasted in error.
	return fmt.Sprintf("invalid name: %s (a name is %s)", e.Reason, NameRule)
}

// NameRule is a name's rule as every refusal of one says it (the agent's tools too).
const NameRule = "1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, no '..'"

// ValidName checks a document, checkpoint, log or session name: 1 to 64 bytes of
// [a-z0-9._-], starting with a letter or digit, no "..", not ending in '.', not a Windows
// device name (con, nul, com1, ... with or without an extension). Lowercase only, so two names
// never collide on a case-insensitive file system (macOS, Windows).
func ValidName(name string) error { return validName(name, false) }

// ValidWorkflowID checks a workflow id: as ValidName but upper case letters are allowed too,
// since ids carry a UTC stamp ("apex-20261122T173000Z-3f9a").
func ValidWorkflowID(id string) error { return validName(id, true) }

func validName(name string, upper bool) error {
	if err := nameShape(name, upper); err != nil {
		return err
	}
	// A name becomes a file name, a lock file name and a line in listings: never a secret.
	if f := secrets.ScanString(name); f != nil {
		return &NameError{Name: name, Reason: f.Refusal("the name")}
	}
	return nil
}

// nameShape is validName without the secret scan: enough for a name that is only read (an
// id read back from a record, which like the record's other fields was scanned when it was
// written). The scan's first use costs a hook process about 0.1 ms.
func nameShape(name string, upper bool) error {
	bad := func(reason string) error { return &NameError{Name: name, Reason: reason} }
	switch {
	case name == "":
		return bad("it is empty")
	case len(name) > MaxNameLen:
		return bad(fmt.Sprintf("it is %d bytes, over %d", len(name), MaxNameLen))
	case strings.Contains(name, ".."):
		return bad(`it contains ".."`)
	case name[0] == '.' || name[0] == '-' || name[0] == '_':
		return bad("it starts with '" + name[:1] + "'")
	case name[len(name)-1] == '.':
		return bad("it ends with '.'")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		case upper && c >= 'A' && c <= 'Z':
		case c >= 'A' && c <= 'Z':
			return bad("it has upper case letters")
		case c == '/' || c == '\\':
			return bad("it contains a path separator")
		case c == 0:
			return bad("it contains a NUL byte")
		case c >= 0x80:
			// One byte of a longer character: quoting it alone would show another letter
			// ('é' begins with the byte Latin-1 calls 'Ã').
			return bad(fmt.Sprintf("it contains a non-ASCII character at byte %d", i))
		default:
			return bad(fmt.Sprintf("it contains %q", c))
		}
	}
	// Windows reserves these names with any extension, on every drive and folder.
	switch stem, _, _ := strings.Cut(strings.ToLower(name), "."); stem {
	case "con", "prn", "aux", "nul", "clock$", "conin$", "conout$",
		"com0", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8", "com9",
		"lpt0", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9":
		return bad("it is a reserved device name on Windows")
	}
	return nil
}
