package yamldoc

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// The skill's "Writing a workflow definition" explains every front matter key a definition may
// have (the README sends people there for them), so a key added to frontMatter cannot go
// unexplained. It failed before major and blocking were explained.
func TestSkillExplainsEveryDefinitionKey(t *testing.T) {
	data, err := os.ReadFile("../../skills/cairn/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Writing a workflow definition\n")
	if !ok {
		t.Fatal("SKILL.md has no \"## Writing a workflow definition\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	ft := reflect.TypeFor[frontMatter]()
	if ft.NumField() < 8 {
		t.Fatalf("frontMatter has %d fields: not the definition's keys", ft.NumField())
	}
	for f := range ft.Fields() {
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "name" || key == "description" {
			continue // shown in the example; Claude Code's own front matter keys
		}
		if !strings.Contains(section, "\n- `"+key) {
			t.Errorf("SKILL.md's definition section has no \"- `%s\" item explaining the key %s", key, key)
		}
	}
}
