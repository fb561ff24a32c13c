package gitremote_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestRefusalSaysWhatTheHookSaid: a push a pre-receive hook refuses is told with the hook's own
// words (git prints them as "remote: ..." lines), the one thing that says why: "pre-receive hook
// declined" alone sent the person to cairn doctor, which then said the host refuses both
// namespaces. The words are the host's, not Cairn's: cleaned to one safe line, cut, a
// credential in a URL masked, over git's file:// and git daemon transports alike.
func TestRefusalSaysWhatTheHookSaid(t *testing.T) {
	ctx := bg(t)
	for _, tc := range []struct {
		name, say string
		want      []string
		not       []string
	}{
		{"plain reason", `echo "pushes are frozen until Monday: ask ops"`, []string{"pushes are frozen until Monday: ask ops"}, nil},
		{"several lines", `echo "GL-HOOK-ERR: commit author"; echo "must use a company address"`,
			[]string{"GL-HOOK-ERR: commit author must use a company address"}, nil},
		{"markdown and credentials", "printf 'see [here](http://x) at https://bob:hunter2@example.com/r \\033[31mred\\n'",
			[]string{`see \[here\](http://x)`, "https://***@example.com/r"}, []string{"hunter2", "\033"}},
		{"long", `i=0; while [ $i -lt 100 ]; do printf 'word%d ' $i; i=$((i+1)); done; echo`, []string{"word1 ", "…"}, []string{"word99"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare := bareRepo(t)
			if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte("#!/bin/sh\n{ "+tc.say+"; } >&2\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, url := range []string{"file://" + bare, "git://" + daemon(t, filepath.Dir(bare)) + "/" + filepath.Base(bare)} {
				_, err := clone(t, url, gitremote.Refs).Append(ctx, "wf-1", 0, remote.Slice([]byte("x")))
				var re *gitremote.RefusedError
				if !errors.As(err, &re) {
					t.Fatalf("Append refused by a hook = %v, want a *RefusedError", err)
				}
				// The host's words say why, not what to do here: the step follows them.
				if step := "; nothing here was lost: the host's admin settles what it said, then " + remote.NextSyncTries; !strings.HasSuffix(err.Error(), step) {
					t.Errorf("%s: refusal %q does not end with the step %q", url, err, step)
				}
				dir := t.TempDir()
				git(t, dir, "init", "-q")
				_, perr := gitremote.Probe(ctx, gitremote.Config{Dir: dir, Remote: url})
				if strings.Contains(perr.Error(), remote.NextSyncTries) {
					t.Errorf("%s: the probe's refusal %q gives a sync's step", url, perr)
				}
				for _, e := range []error{err, perr} {
					for _, w := range tc.want {
						if !strings.Contains(e.Error(), w) {
							t.Errorf("%s: refusal %q does not say %q", url, e, w)
						}
					}
					for _, n := range tc.not {
						if strings.Contains(e.Error(), n) {
							t.Errorf("%s: refusal %q says %q", url, e, n)
						}
					}
				}
			}
		})
	}
}
