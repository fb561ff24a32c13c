// Package cairn is what every Cairn binary knows of the plugin it belongs to: the version in
// the plugin's manifest (.claude-plugin/plugin.json, embedded at build time, so a binary
// always reports the version it was built from, with no flags to forget) and the commit, when
// the build recorded one.
//
// Release binaries (make dist) record no commit: their checksums are committed in the
// repository, so they cannot embed the commit that holds them. A build from a git checkout
// (make build, go build) records it through Go's own VCS stamping.
package cairn

import (
	_ "embed"
	"encoding/json"
	"runtime/debug"
	"sync"
)

//go:embed .claude-plugin/plugin.json
var manifest []byte

var versionOnce = sync.OnceValue(func() string {
	var m struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(manifest, &m) != nil || m.Version == "" {
		return "unknown" // plugin.json is checked by tests and by `claude plugin validate`
	}
	return m.Version
})

// Version is the plugin's version, as .claude-plugin/plugin.json gives it.
func Version() string { return versionOnce() }

// Commit is the commit the binary was built from (12 hex digits, "+dirty" when the checkout
// had changes), or "" when the build did not record one.
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// SemVer is the version with the commit as semver build metadata, "0.1.0+0123456789ab", for
// fields that take one version string (the MCP server's initialize answer).
func SemVer() string {
	if c := Commit(); c != "" {
		return Version() + "+" + c
	}
	return Version()
}

// Describe is the version with the commit when known: "0.1.0" or "0.1.0 (commit 0123456789ab)".
func Describe() string {
	if c := Commit(); c != "" {
		return Version() + " (commit " + c + ")"
	}
	return Version()
}
