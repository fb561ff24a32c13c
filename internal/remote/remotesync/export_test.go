package remotesync

// SetStepHook lets the tests act at the steps of a lost race that run no git.
func SetStepHook(f func(step string)) { stepHook = f }
