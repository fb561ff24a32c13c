package workflow

import "time"

// UnsetVar removes a workflow variable; one that is not set changes nothing.
func UnsetVar(r *Record, key string, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	if err := validVarKey(key); err != nil {
		return Result{}, err
	}
	if _, ok := r.Vars[key]; !ok {
		return Result{Record: r.Clone(), Event: EventNone, From: r.State, To: r.State}, nil
	}
	n := r.Clone()
	warnings := touch(n, by, now.UTC())
	delete(n.Vars, key)
	return Result{Record: n, Changed: true, Event: EventVar, From: r.State, To: r.State, Warnings: warnings}, nil
}
