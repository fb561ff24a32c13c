package gitremote_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestPublic: a remote is public when git reads it without credentials, over a real HTTP
// server (git http-backend) and git daemon on 127.0.0.1; one that asks for credentials, a
// file:// one, an SSH one on an unknown host and one that does not answer are not.
func TestPublic(t *testing.T) {
	bare := bareRepo(t)
	base, name := filepath.Dir(bare), filepath.Base(bare)
	open := gittest.HTTP(t, base, "", "")
	private := gittest.HTTP(t, base, "sam", "s3cret")
	dmn := daemon(t, base)
	// The private server does serve a reader with the credentials: "not public" below is the
	// missing credentials, not a broken server.
	git(t, t.TempDir(), "ls-remote", "http://sam:s3cret@"+private[len("http://"):]+"/"+name)
	for _, tc := range []struct {
		name, url string
		want      bool
	}{
		{"http anyone may read", open + "/" + name, true},
		{"http with a user in the URL, anyone may read", "http://someone:tok@" + open[len("http://"):] + "/" + name, true},
		{"http needs credentials", private + "/" + name, false},
		{"http credentials in the URL are not used", "http://sam:s3cret@" + private[len("http://"):] + "/" + name, false},
		{"git daemon", "git://" + dmn + "/" + name, true},
		{"file", "file://" + bare, false},
		{"ssh elsewhere", "git@example.invalid:team/repo.git", false},
		{"nothing listens", "http://127.0.0.1:1/" + name, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			git(t, dir, "remote", "add", "origin", tc.url)
			if got := gitremote.Public(context.Background(), dir, "origin", 20*time.Second); got != tc.want {
				t.Fatalf("Public(%s) = %v, want %v", tc.url, got, tc.want)
			}
		})
	}
}
