package gitremote_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestNoCredentialPrompt: a remote that asks for credentials gets them from the user's
// credential helpers or not at all. An askpass program (GIT_ASKPASS, core.askPass, or
// SSH_ASKPASS, which git falls back to, as ssh does when there is no terminal) is a prompt,
// usually a window on the desktop, and nobody is there to answer it when the MCP server syncs
// in the background, every few seconds.
func TestNoCredentialPrompt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	ctx := bg(t)
	bare := bareRepo(t)
	private := gittest.HTTP(t, filepath.Dir(bare), "sam", "s3cret")
	for _, how := range []string{"GIT_ASKPASS", "core.askPass", "SSH_ASKPASS"} {
		t.Run(how, func(t *testing.T) {
			asked := filepath.Join(t.TempDir(), "asked")
			prog := filepath.Join(t.TempDir(), "askpass")
			script := "#!/bin/sh\necho \"$1\" >> '" + asked + "'\ncase \"$1\" in Username*) echo sam;; *) echo s3cret;; esac\n"
			if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{"GIT_ASKPASS", "SSH_ASKPASS"} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			t.Setenv("DISPLAY", ":0")
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			git(t, dir, "remote", "add", "origin", private+"/"+filepath.Base(bare))
			if how == "core.askPass" {
				git(t, dir, "config", "core.askPass", prog)
			} else {
				t.Setenv(how, prog)
			}
			b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = b.Heads(ctx)
			if prompts, rerr := os.ReadFile(asked); rerr == nil {
				t.Fatalf("the askpass program was run (Heads: %v):\n%s", err, prompts)
			}
			if err == nil {
				t.Fatal("Heads read a remote that needs credentials without any")
			}
		})
	}
}
