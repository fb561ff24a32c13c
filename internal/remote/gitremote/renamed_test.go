package gitremote_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestRemoteRenamedIsNoRemote: sharing names a remote of the clone ("origin"); renamed (git
// remote rename) or removed while sharing is on, every fetch and push fails the same way, which
// read as a remote out of reach ("check that git fetch origin works"), a step that cannot work.
// The error now matches gitremote.ErrNoRemote; a remote that is there but whose address is gone
// does not.
func TestRemoteRenamedIsNoRemote(t *testing.T) {
	for _, tc := range []struct {
		name, remote string
		after        [][]string // git commands run in the clone after the first append
		gone         bool
	}{
		{"renamed", "origin", [][]string{{"remote", "rename", "origin", "upstream"}}, true},
		{"removed", "origin", [][]string{{"remote", "remove", "origin"}}, true},
		{"url gone", "origin", [][]string{{"remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git")}}, false},
		// A name git allows and cairn remote enable takes, though not one a mirror ref is named by.
		{"dotted name renamed", "team.hub", [][]string{{"remote", "rename", "team.hub", "hub"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare, dir := bareRepo(t), t.TempDir()
			git(t, dir, "init", "-q")
			git(t, dir, "remote", "add", tc.remote, "file://"+bare)
			b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: tc.remote})
			if err != nil {
				t.Fatal(err)
			}
			const id = "wf-1"
			if _, err := b.Append(bg(t), id, 0, remote.Slice([]byte(`{"r":1}`))); err != nil {
				t.Fatal(err)
			}
			for _, args := range tc.after {
				git(t, dir, args...)
			}
			_, herr := b.Heads(bg(t))
			_, serr := b.Since(bg(t), id, 0)
			_, aerr := b.Append(bg(t), id, 1, remote.Slice([]byte(`{"r":2}`)))
			for what, err := range map[string]error{"Heads": herr, "Since": serr, "Append": aerr} {
				if err == nil || errors.Is(err, gitremote.ErrNoRemote) != tc.gone {
					t.Errorf("%s = %v; want an error that is ErrNoRemote: %v", what, err, tc.gone)
				}
			}
		})
	}
}

// TestStepsNameTheRemote: the steps for a line no sync can read name the git remote to run git
// with. A remote whose name git allows but that is no plain word ("team.hub") was named
// "<remote>", which a shell takes for a redirection; only an address (which may hold a token)
// is left unnamed.
func TestStepsNameTheRemote(t *testing.T) {
	for remote, want := range map[string]string{
		"origin":                      "git fetch origin refs/cairn/wf/wf-1",
		"team.hub":                    "git fetch team.hub refs/cairn/wf/wf-1",
		"https://x:tok@host/r.git":    "git fetch <remote> refs/cairn/wf/wf-1",
		"file:///srv/git/shared.git":  "git fetch <remote> refs/cairn/wf/wf-1",
		"git@host.example:team/r.git": "git fetch <remote> refs/cairn/wf/wf-1",
		"../shared.git":               "git fetch <remote> refs/cairn/wf/wf-1",
	} {
		b, err := gitremote.New(gitremote.Config{Dir: t.TempDir(), Remote: remote})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.UnreadableStep("wf-1"); !strings.Contains(got, want) {
			t.Errorf("remote %q: step %q, want it to say %q", remote, got, want)
		}
	}
}
