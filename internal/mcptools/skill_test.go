package mcptools_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/mark3labs/mcp-go/mcp"
)

// skillSentences are the sentences of the skill that hold every one of words.
func skillSentences(t *testing.T, words ...string) []string {
	t.Helper()
	data, err := os.ReadFile("../../skills/cairn/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for s := range strings.SplitSeq(strings.Join(strings.Fields(string(data)), " "), ". ") {
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(s, w) }) {
			out = append(out, s)
		}
	}
	return out
}

// The skill's steps for a refused call keep the refusal's own: a model that read the skill
// acts before it ever sees the refusal. Replacing an active workflow is asked of the user
// first, as start_workflow's refusal says; and for a refused approval the skill names no
// command that one of the refusals does not give (a person who said no is not asked to run
// cairn approve). It failed while the skill offered `replace: true` with no word of the user,
// and sent the model to `cairn approve` after every refusal.
func TestSkillKeepsTheRefusalsSteps(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"one"}`)
	refusal := text(mustFail(t, c, "start_workflow", `{"type":"debug","context":"two"}`))
	_, step, ok := strings.Cut(refusal, "to start another instead, ")
	step, _, _ = strings.Cut(step, ", then start again with replace")
	if !ok || step == "" {
		t.Fatalf("start_workflow's refusal no longer says what to do first: %q", refusal)
	}
	replace := skillSentences(t, "`replace")
	if len(replace) == 0 {
		t.Fatal("the skill no longer names `replace`")
	}
	for _, s := range replace {
		if !strings.Contains(s, step) {
			t.Errorf("the skill offers replace without %q, as the refusal asks (%q): %q", step, refusal, s)
		}
	}

	var refusals []string
	for _, who := range []*person{{action: mcp.ElicitationResponseActionDecline}, {action: mcp.ElicitationResponseActionCancel}, nil} {
		c := c
		if who != nil {
			_, c = elicitingServer(t, who)
		} else {
			_, c = realServer(t)
		}
		mustOK(t, c, "start_workflow", `{"type":"apex","context":"gate"}`)
		mustOK(t, c, "transition", `{"to":"plan"}`)
		refusals = append(refusals, text(mustFail(t, c, "transition", `{"to":"implement"}`, "phase plan")))
	}
	approval := skillSentences(t, "approv", "refus")
	if len(approval) == 0 {
		t.Fatal("the skill no longer says what to do when leaving an approval phase is refused")
	}
	for _, s := range approval {
		for _, m := range regexp.MustCompile("`(cairn [a-z]+)").FindAllStringSubmatch(s, -1) {
			for _, r := range refusals {
				if !strings.Contains(r, m[1]) {
					t.Errorf("the skill sends the model to `%s` when an approval is refused, which this refusal does not: %q\nskill: %q", m[1], r, s)
				}
			}
		}
	}
}

// The server's instructions reach the model in the system prompt, outside Cairn's tool
// results, beside the deferred tool list that names each tool in full: where they name a tool
// they name it as the model sees it, as the resume report does. It failed while they said
// "Call resume_check when resuming work, start_workflow ...".
func TestInstructionsNameToolsAsTheModelSeesThem(t *testing.T) {
	_, c := realServer(t)
	tools, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, word := range regexp.MustCompile(`[A-Za-z0-9_]+`).FindAllString(mcptools.Instructions, -1) {
		for _, tool := range tools.Tools {
			switch word {
			case toolPrefix + tool.Name:
				named++
			case tool.Name:
				named++
				t.Errorf("the instructions name %s bare: %q", tool.Name, mcptools.Instructions)
			}
		}
	}
	if named == 0 {
		t.Fatalf("the instructions name none of the %d tools: %q", len(tools.Tools), mcptools.Instructions)
	}
}
