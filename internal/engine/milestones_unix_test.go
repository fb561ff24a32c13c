//go:build unix

package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// The milestone scan reads what a repository planted: each file it finds is listed (a file
// it cannot or will not read by name, with why), in name order, the first milestoneScanCap
// opened and the rest counted, in a notice short enough for the report to keep whole; it
// follows no link out of the project and repeats no secret.
func TestMilestoneScanHostile(t *testing.T) {
	t.Parallel()
	const active = "documentation/milestones/_active"
	sec := secrettest.Shapes()[3] // a GitHub token
	glued := secrettest.GluedToken(t)
	for _, tc := range []struct {
		name  string
		setup func(e *env)
		want  []string // in the notice, and in the report the session start prints
		never []string // in neither, nor anywhere in the answer
	}{
		{"many files: sorted, capped, counted", func(e *env) {
			for i := 29; i >= 0; i-- {
				e.write(fmt.Sprintf("%s/m%02d.md", active, i), "---\ntitle: Milestone number "+fmt.Sprint(i)+"\n---\n")
			}
		}, []string{"m00 (Milestone number 0)", " more"}, []string{"m29"}},
		{"a file over the read limit is listed", func(e *env) {
			e.write(active+"/big.md", "---\ntitle: Big\n---\n"+strings.Repeat("body text\n", 10000))
		}, []string{"big (not read: over 64 KiB)"}, nil},
		{"a FIFO is listed, not read", func(e *env) {
			e.write(active+"/a.md", "---\ntitle: A\n---\n")
			if err := syscall.Mkfifo(filepath.Join(e.project, active, "fifo.md"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"a (A), fifo (not read: not a regular file)"}, nil},
		{"a link out of the project is not followed", func(e *env) {
			out := filepath.Join(e.home, "elsewhere.md")
			if err := os.WriteFile(out, []byte("---\ntitle: OUTSIDE\n---\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.write(active+"/a.md", "---\ntitle: A\n---\n")
			if err := os.Symlink(out, filepath.Join(e.project, active, "link.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"a (A), link (not read: a link out of the project)"}, []string{"OUTSIDE"}},
		{"a link within the project is followed", func(e *env) {
			e.write("documentation/m1.md", "---\ntitle: Inside\n---\n")
			e.write(active+"/keep", "")
			if err := os.Symlink("../../m1.md", filepath.Join(e.project, active, "m1.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"m1 (Inside)"}, nil},
		{"a linked directory within the project is read", func(e *env) {
			e.write("docs/active/m2.md", "---\ntitle: Linked in\n---\n")
			e.write("documentation/milestones/keep", "")
			if err := os.Symlink(filepath.Join(e.project, "docs", "active"), filepath.Join(e.project, active)); err != nil {
				t.Fatal(err)
			}
		}, []string{"m2 (Linked in)"}, nil},
		{"a linked directory is not listed", func(e *env) {
			out := filepath.Join(e.home, "ms")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "outside.md"), []byte("---\ntitle: OUTSIDE\n---\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.write("documentation/milestones/keep", "")
			if err := os.Symlink(out, filepath.Join(e.project, active)); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"OUTSIDE", "outside"}},
		{"a secret in the front matter is not repeated", func(e *env) {
			e.write(active+"/s.md", "---\ntitle: token "+sec.Text+"\n---\n")
		}, []string{"s (front matter not shown: it has a secret's shape)"}, []string{sec.Core}},
		{"a title's cut makes no secret of a token glued to more text", func(e *env) {
			e.write(active+"/g.md", "---\ntitle: "+strings.Repeat("w", 15)+" "+glued+" and more words\n---\n")
		}, []string{"g (" + strings.Repeat("w", 15) + "…)"}, []string{glued[:40]}},
		{"control characters and long titles", func(e *env) {
			e.write(active+"/c.md", "---\ntitle: \"a\\nb\\u0007c "+strings.Repeat("x", 200)+"\"\n---\n")
		}, []string{"c (a bc xxx"}, []string{"a\nb", "b\ac", strings.Repeat("x", 100)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.setup(e)
			res := e.openYAML(yamldoc.Codec{}).Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			notice := strings.Join(res.Notices, "\n")
			for _, w := range tc.want {
				if !strings.Contains(notice, w) {
					t.Errorf("notices %q lack %q", res.Notices, w)
				}
				if !strings.Contains(res.Report, w) {
					t.Errorf("report lacks %q:\n%s", w, res.Report)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(notice, n) || strings.Contains(res.Report, n) || strings.Contains(res.SystemMessage, n) {
					t.Errorf("%q shown: notices %q, report:\n%s", n, res.Notices, res.Report)
				}
			}
			for _, n := range res.Notices {
				if c := utf8.RuneCountInString(n); c > 300 {
					t.Errorf("notice of %d runes, which the report cuts: %q", c, n)
				}
			}
		})
	}
}

// A WORKFLOW-STATUS.yaml a repository planted as a link out of the project is not another
// source of this project's initiative: get read it through the link and took its initiative
// (another project's, say) into initiative.json. It is now left as it is and the answer says
// why; a link within the project is read as before.
func TestStatusFileLinkOutOfTheProject(t *testing.T) {
	t.Parallel()
	const content = "initiative: initiative-20261120T090000Z-ab12\ntitle: Elsewhere\nstatus: in_progress\nlastUpdated: 2026-11-21T09:00:00Z\n"
	for _, tc := range []struct {
		name   string
		target func(e *env) string
		taken  bool
	}{
		{"out of the project", func(e *env) string { return filepath.Join(e.home, "WORKFLOW-STATUS.yaml") }, false},
		{"within the project", func(e *env) string { return filepath.Join(e.project, "docs", "WORKFLOW-STATUS.yaml") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			target := tc.target(e)
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(e.project, "WORKFLOW-STATUS.yaml")); err != nil {
				t.Fatal(err)
			}
			res := must(e.openYAML(yamldoc.Codec{}).Initiative(engine.InitiativeRequest{Action: "get"}))(t)
			_, err := os.Stat(filepath.Join(e.project, ".claude", "cairn", "initiative.json"))
			if taken := err == nil; taken != tc.taken {
				t.Errorf("initiative.json made from the linked file: %t, want %t (%q, %q)", taken, tc.taken, res.Message, res.Warnings)
			}
			if !tc.taken && !strings.Contains(strings.Join(res.Warnings, "\n"), "link out of the project") {
				t.Errorf("warnings %q do not say why the file was not used", res.Warnings)
			}
		})
	}
}
