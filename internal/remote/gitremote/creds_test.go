package gitremote_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// TestCredentialsInTheURLAreNotRepeated: a remote whose URL holds credentials fails, and git's
// reason, which the error gives, names the host with them; the error masks them wherever git
// put them, not only right after "://" (git:// prints "unable to look up sam:s3cret@host", ssh
// "sam:s3cret@host: Permission denied").
func TestCredentialsInTheURLAreNotRepeated(t *testing.T) {
	denied := `echo "$1: Permission denied (publickey)." >&2; false`
	var token string
	for _, sh := range secrettest.Shapes() {
		if sh.Name == "github-classic" {
			token = sh.Text
		}
	}
	for _, tc := range []struct{ name, url, ssh, secret string }{
		{"git user and password", "git://sam:s3cret@127.0.0.1:1/x.git", "", "s3cret"},
		{"git token as user", "git://ghp_t0ken@127.0.0.1:1/x.git", "", "ghp_t0ken"},
		{"ssh user and password", "ssh://sam:s3cret@127.0.0.1/x.git", denied, "s3cret"},
		{"https user and password", "https://sam:s3cret@127.0.0.1:1/x.git", "", "s3cret"},
		// not credentials git knows, but a token all the same
		{"https token in the query", "https://127.0.0.1:1/x.git?access_token=" + token, "", token},
		{"https token in the path", "https://127.0.0.1:1/" + token + "/x.git", "", token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := headsOf(t, tc.url, tc.ssh)
			if err == nil || strings.Contains(err.Error(), tc.secret) || !strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("Heads = %v; want git's reason with the credentials masked", err)
			}
		})
	}
}
