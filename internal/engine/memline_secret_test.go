package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// Memory has other writers (Claude Code's memory writer, the model, a person, a Cairn from
// before a scan): a line there of a secret's shape, read as the last position or the last
// ending, is repeated by no surface of the resume answer (its JSON, which resume_check's
// structured content and cairn status --json are, and its report).
func TestMemoryLineWithASecretIsNotRepeated(t *testing.T) {
	for _, c := range []struct {
		name, file string
		content    func(line string) string
		ended      bool
	}{
		{"index line", memory.IndexFile, func(l string) string {
			return "# Memory\n- [Cairn workflow](" + memory.TopicFile + ") — " + l + "\n"
		}, false},
		{"topic line", memory.TopicFile, func(l string) string { return "- 2026-11-22T09:00:00Z " + l + "\n" }, false},
		{"ending on the index line", memory.IndexFile, func(l string) string {
			return "- [Cairn workflow](" + memory.TopicFile + ") — Completed APEX for x: " + l + "\n"
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range secrettest.Shapes() {
				if strings.Contains(s.Text, "\n") {
					continue // a memory line is one line
				}
				e := newEnv(t)
				if err := os.MkdirAll(e.memoryDir(), 0o700); err != nil {
					t.Fatal(err)
				}
				line := "Active APEX for x: " + s.Text
				if c.ended {
					line = s.Text
				}
				if err := os.WriteFile(filepath.Join(e.memoryDir(), c.file), []byte(c.content(line)), 0o600); err != nil {
					t.Fatal(err)
				}
				for _, opt := range []engine.ResumeOptions{{Person: true}, {Apply: true, FromClient: true}, {Apply: true, ReportOnly: true}} {
					r := e.open("s1").Resume(opt)
					raw, _ := json.Marshal(r)
					if strings.Contains(string(raw), s.Core) || strings.Contains(r.Report, s.Core) {
						t.Fatalf("%s (%+v): repeated:\n%s\n%s", s.Name, opt, raw, r.Report)
					}
					got := r.L2Line
					if c.ended {
						got = r.Ended
					}
					if opt.ReportOnly && !c.ended { // an ending known only from memory is not told
						got = r.Report
					}
					if !strings.Contains(got, "(not shown: it has a secret's shape)") {
						t.Fatalf("%s (%+v): the line is not said to be hidden:\n%s\n%s", s.Name, opt, raw, r.Report)
					}
				}
			}
		})
	}
}
