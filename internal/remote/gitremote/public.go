package gitremote

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/lazyre"
)

// publicHost reports the hosts whose SSH addresses Public also tries over anonymous HTTPS: an
// ssh URL says nothing about who may read, but on these hosts the same repository is at
// https://host/path, where reading without credentials means the repository is public.
func publicHost(host string) bool {
	switch strings.ToLower(host) {
	case "github.com", "gitlab.com", "bitbucket.org", "codeberg.org":
		return true
	}
	return false
}

// scpLike is git's user@host:path form.
var scpLike = lazyre.New(`^(?:[^@/]+@)?([A-Za-z0-9.-]+):([^/].*)$`)

// Public reports whether the remote (a name of the repository in dir, or a URL) can be read
// by anyone: git ls-remote succeeds with no credentials (no helper, no prompt, the URL's user
// and password dropped). It tries http(s):// and git:// addresses as they are, and an SSH
// address on a well-known host (github.com, gitlab.com, bitbucket.org, codeberg.org) as the
// same path over https. file:// and other SSH addresses read only with the machine's own
// access, so they are not public as far as Cairn can tell. Any failure counts as not public:
// the answer is a warning's trigger, not a guarantee.
func Public(ctx context.Context, dir, remote string, timeout time.Duration) bool {
	if strings.HasPrefix(remote, "-") {
		return false
	}
	out, err := gitOutput(ctx, dir, timeout, "remote", "get-url", "--", remote)
	if err != nil {
		return false
	}
	u := anonymousURL(strings.TrimSpace(out))
	if u == "" {
		return false
	}
	// An empty credential.helper clears the configured helpers; askpass "true" answers every
	// prompt with nothing, so a server that wants credentials refuses.
	_, err = gitOutput(ctx, dir, timeout, "-c", "credential.helper=", "-c", "core.askPass=true",
		"ls-remote", "--heads", "--", u)
	return err == nil
}

// HasRemote reports whether the repository in dir has a remote called name, asking git as
// every git run of this package does (the repository-locating variables of the caller's shell
// left out, no prompt).
func HasRemote(ctx context.Context, dir, name string, timeout time.Duration) error {
	_, err := gitOutput(ctx, dir, timeout, "remote", "get-url", "--", name)
	return err
}

// NoSuchRemote reports whether err, HasRemote's, is git's answer for a name that is no remote
// of the repository (exit 2), rather than git failing to answer.
func NoSuchRemote(err error) bool {
	ee, ok := errors.AsType[*exec.ExitError](err)
	return ok && ee.ExitCode() == 2
}

// anonymousURL is the address Public tries for raw, or "" when it tries none.
func anonymousURL(raw string) string {
	if m := scpLike().FindStringSubmatch(raw); m != nil && !strings.Contains(raw, "://") {
		if publicHost(m[1]) {
			return "https://" + strings.ToLower(m[1]) + "/" + m[2]
		}
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	switch u.Scheme {
	case "http", "https", "git":
	case "ssh", "git+ssh", "ssh+git":
		if !publicHost(u.Hostname()) {
			return ""
		}
		u.Scheme, u.Host = "https", strings.ToLower(u.Hostname())
	default:
		return ""
	}
	u.User = nil
	return u.String()
}

func gitOutput(ctx context.Context, dir string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", stallEnds(timeout, args)...)
	cmd.Dir = dir
	cmd.Env = gitEnv("GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true", "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.WaitDelay = 2 * time.Second
	waited := detach(cmd)
	err := cmd.Run()
	waited()
	if errors.Is(err, exec.ErrNotFound) {
		err = ErrNoGit
	}
	return out.String(), err
}
