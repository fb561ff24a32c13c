package gittest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"testing"
)

// HTTP serves every repository under base over git's smart HTTP (git http-backend) on
// 127.0.0.1 until the test ends, and returns its URL. With a user, every request must carry
// that user and password (HTTP basic authentication), as a private repository on a host
// would; without one, anyone may read, as a public one.
func HTTP(t testing.TB, base, user, password string) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skipf("git is not available: %v", err)
	}
	backend := &cgi.Handler{Path: git, Args: []string{"http-backend"}, Dir: base,
		Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1"}}
	h := http.Handler(backend)
	if user != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			backend.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
