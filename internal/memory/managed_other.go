//go:build !windows && !darwin

package memory

// defaultManagedSettings is Claude Code's managed (policy) settings file on Linux and other
// Unix systems.
const defaultManagedSettings = "/etc/claude-code/managed-settings.json"
