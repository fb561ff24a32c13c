package gitremote

import "testing"

// TestAnonymousURL: which address Public tries for each kind of remote URL.
func TestAnonymousURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://github.com/team/repo.git", "https://github.com/team/repo.git"},
		{"https://x-access-token:ghp_secret@github.com/team/repo.git", "https://github.com/team/repo.git"},
		{"git@github.com:team/repo.git", "https://github.com/team/repo.git"},
		{"git@GitLab.com:group/sub/repo", "https://gitlab.com/group/sub/repo"},
		{"ssh://git@bitbucket.org/team/repo.git", "https://bitbucket.org/team/repo.git"},
		{"ssh://git@codeberg.org:22/team/repo.git", "https://codeberg.org/team/repo.git"},
		{"git://127.0.0.1:9418/repo.git", "git://127.0.0.1:9418/repo.git"},
		{"git@git.internal.example:team/repo.git", ""},
		{"ssh://git@git.internal.example/team/repo.git", ""},
		{"file:///srv/git/repo.git", ""},
		{"/srv/git/repo.git", ""},
		{"../repo.git", ""},
	} {
		if got := anonymousURL(tc.in); got != tc.want {
			t.Errorf("anonymousURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
