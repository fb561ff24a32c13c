package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The PluginSpecs must match the manifests they assemble, or a scenario would run a plugin
// under the wrong tool names or without a binary its hooks need. No Claude Code needed.
func TestPluginSpecsMatchManifests(t *testing.T) {
	root := repoRoot(t)
	for _, spec := range []PluginSpec{toyPlugin, cairnPlugin} {
		t.Run(spec.Name, func(t *testing.T) {
			src := filepath.Join(root, filepath.FromSlash(spec.Src))
			var manifest struct {
				Name string `json:"name"`
			}
			readJSON(t, filepath.Join(src, ".claude-plugin", "plugin.json"), &manifest)
			if manifest.Name != spec.Name {
				t.Errorf("plugin.json name %q, spec says %q", manifest.Name, spec.Name)
			}
			var mcp struct {
				Servers map[string]json.RawMessage `json:"mcpServers"`
			}
			readJSON(t, filepath.Join(src, ".mcp.json"), &mcp)
			if _, ok := mcp.Servers[spec.Server]; !ok {
				t.Errorf(".mcp.json has servers %v, spec says %q", slices.Collect(maps.Keys(mcp.Servers)), spec.Server)
			}
			for _, f := range spec.Files {
				if _, err := os.Stat(filepath.Join(src, f)); err != nil {
					t.Errorf("spec copies %s: %v", f, err)
				}
			}

			// Every binary the manifests start must be one the spec builds.
			install, err := os.ReadFile(filepath.Join(src, "hooks", "install"))
			switch {
			case err == nil:
				// Cairn's manifests go through hooks/launch, which runs bin/<name> and otherwise
				// has hooks/install build name:package pairs: the spec must build the same set.
				m := regexp.MustCompile(`for cairn_b in (cairn[^;]*:[^;]+);`).FindSubmatch(install)
				if m == nil {
					t.Fatal("hooks/install has no `for cairn_b in name:pkg ...;` build list")
				}
				want := map[string]string{}
				for _, pair := range strings.Fields(string(m[1])) {
					name, pkg, _ := strings.Cut(pair, ":")
					want[name] = pkg
				}
				if !maps.Equal(want, spec.Binaries) {
					t.Errorf("hooks/install builds %v, spec builds %v", want, spec.Binaries)
				}
			case os.IsNotExist(err):
				var refs []string
				for _, f := range []string{".mcp.json", filepath.Join("hooks", "hooks.json")} {
					data, err := os.ReadFile(filepath.Join(src, f))
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range regexp.MustCompile(`/bin/([A-Za-z0-9_-]+)`).FindAllSubmatch(data, -1) {
						refs = append(refs, string(m[1]))
					}
				}
				if len(refs) == 0 {
					t.Fatal("the manifests start no bin/ program")
				}
				for _, name := range refs {
					if _, ok := spec.Binaries[name]; !ok {
						t.Errorf("manifests start bin/%s, which the spec does not build", name)
					}
				}
			default:
				t.Fatal(err)
			}
		})
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
