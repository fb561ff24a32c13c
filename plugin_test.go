package cairn

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// The version every binary reports is the manifest's, read from the file Claude Code reads.
func TestVersionIsTheManifests(t *testing.T) {
	data, err := os.ReadFile(".claude-plugin/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Version == "" {
		t.Fatalf("plugin.json has no version: %v", err)
	}
	if got := Version(); got != m.Version {
		t.Errorf("Version() = %q, want plugin.json's %q", got, m.Version)
	}
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$|^[0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{12}(-dirty)?\)$`).MatchString(Describe()) {
		t.Errorf("Describe() = %q, want the version, then the commit when known", Describe())
	}
	if want := regexp.MustCompile(`^` + regexp.QuoteMeta(Version()) + `(\+[0-9a-f]{12}(-dirty)?)?$`); !want.MatchString(SemVer()) {
		t.Errorf("SemVer() = %q, want the version, then +commit when known", SemVer())
	}
}
