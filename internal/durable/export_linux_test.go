package durable

import "time"

// WaitEventsOnly makes a lock waiter try again only on an inotify event (or its deadline), so
// a test can tell a wake on release from a retry on a timer.
func WaitEventsOnly() (restore func()) {
	old := maxEventWait
	maxEventWait = time.Hour
	return func() { maxEventWait = old }
}

// RenameLinked is the no-replace rename's fallback for a filesystem that refuses the flag.
func RenameLinked(d *Dir, oldname, newname string) error {
	return renameLinked(d.root, oldname, newname)
}

// SetHostname is the machine name this process's lock holders record.
func SetHostname(name string) { hostname = func() string { return name } }

// StoppedStat is stoppedStat: whether a /proc/PID/stat is of a stopped process running cmd.
var StoppedStat = stoppedStat
