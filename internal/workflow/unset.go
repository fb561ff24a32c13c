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
		return unchanged(r), nil
	}
	return change(r, EventVar, now.UTC(), by, func(n *Record) { delete(n.Vars, key) }), nil
}
