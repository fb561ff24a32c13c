package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// log show --tail N reads the log backward from its end, only as far as its last N entries:
// of a log past the MaxLogSize cairn reads whole, the tail is shown with no word of older
// entries left unread, and its torn last line is still skipped and counted.
func TestLogShowTailReadsOnlyTheTail(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "log", "append", "big", `{"n":0}`)
	path := filepath.Join(p.root, ".claude", "cairn", "logs", "big.jsonl")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A hole reads as NUL bytes: one long line before the entries.
	if err := f.Truncate(store.MaxLogSize + 10); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\n{\"n\":1}\n{\"n\": 2}\n{\"n\":3}\n{\"torn\":"), store.MaxLogSize+10); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "show", "big", "--tail", "2"}, "{\"n\":2}\n{\"n\":3}\n"},
		{[]string{"log", "show", "big", "--tail", "2", "--json"}, "[\n  {\n    \"n\": 2\n  },\n  {\n    \"n\": 3\n  }\n]\n"},
		{[]string{"log", "show", "big", "--tail", "0"}, ""},
	} {
		code, out := p.run("", c.args...)
		warn := "cairn: warning: log big: 1 unreadable line skipped (the last, cut short)\n"
		if code != 0 || !strings.Contains(out, warn) || strings.Replace(out, warn, "", 1) != c.want {
			t.Errorf("cairn %s: exit %d, printed %q; want %q and the torn line's warning only", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}
