package report

import (
	"cmp"
	"fmt"
	"time"
)

// Shared is what this clone knows of its remote without asking it (package mirror).
type Shared struct {
	Remote   string
	Never    bool          // never synced
	Age      time.Duration // since the last sync
	Unpushed int64         // local revisions the remote lacked at the last sync
	// Unconfirmed counts the tasks set running here while the remote was out of reach, whose
	// claims the next sync confirms or undoes.
	Unconfirmed int
}

// SharedLine is the report's one line on sharing, e.g. "shared via origin: synced 4m ago,
// 2 changes not pushed, 1 claim not confirmed". The SessionStart report and cairn remote status both say it.
func SharedLine(s Shared) string {
	out := "shared via " + line(s.Remote, capName) + ": "
	if s.Never {
		out += "never synced"
	} else {
		out += "synced " + cmp.Or(age(s.Age), "just now")
	}
	switch {
	case s.Unpushed == 1:
		out += ", 1 change not pushed"
	case s.Unpushed > 1:
		out += fmt.Sprintf(", %d changes not pushed", s.Unpushed)
	}
	switch {
	case s.Unconfirmed == 1:
		out += ", 1 claim not confirmed"
	case s.Unconfirmed > 1:
		out += fmt.Sprintf(", %d claims not confirmed", s.Unconfirmed)
	}
	return out
}
