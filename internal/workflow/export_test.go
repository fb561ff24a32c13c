package workflow

import "time"

// OpenTasks is OpenTasksExcept with no task elsewhere.
func OpenTasks(r *Record, ended bool) []string { return OpenTasksExcept(r, ended, nil) }

// Recover is RecoverExcept with no task elsewhere.
func Recover(r *Record, now time.Time, written func(path string) (modified time.Time, ok bool), by Actor) (Result, []string, error) {
	return RecoverExcept(r, now, written, by, nil)
}
