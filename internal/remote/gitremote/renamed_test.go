package gitremote_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestRemoteRenamedIsNoRemote: sharing names a remote of the clone ("origin"); renamed (git
// remote rename) or removed while sharing is on, every fetch and push fails the same way, which
// read as a remote out of reach ("check that git fetch origin works"), a step that cannot work.
// The error now matches gitremote.ErrNoRemote; a remote that is there but whose address is gone
// does not.
func TestRemoteRenamedIsNoRemote(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after [][]string // git commands run in the clone after the first append
		gone  bool
	}{
		{"renamed", [][]string{{"remote", "rename", "origin", "upstream"}}, true},
		{"removed", [][]string{{"remote", "remove", "origin"}}, true},
		{"url gone", [][]string{{"remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git")}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare, dir := bareRepo(t), t.TempDir()
			git(t, dir, "init", "-q")
			git(t, dir, "remote", "add", "origin", "file://"+bare)
			b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
			if err != nil {
				t.Fatal(err)
			}
			const id = "wf-1"
			if _, err := b.Append(bg(t), id, 0, [][]byte{[]byte(`{"r":1}`)}); err != nil {
				t.Fatal(err)
			}
			for _, args := range tc.after {
				git(t, dir, args...)
			}
			_, herr := b.Heads(bg(t))
			_, serr := b.Since(bg(t), id, 0)
			_, aerr := b.Append(bg(t), id, 1, [][]byte{[]byte(`{"r":2}`)})
			for what, err := range map[string]error{"Heads": herr, "Since": serr, "Append": aerr} {
				if err == nil || errors.Is(err, gitremote.ErrNoRemote) != tc.gone {
					t.Errorf("%s = %v; want an error that is ErrNoRemote: %v", what, err, tc.gone)
				}
			}
		})
	}
}
