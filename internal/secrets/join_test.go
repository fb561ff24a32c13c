package secrets_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// Each part was scanned alone when stored; what is printed joined must not make a secret, and
// says as much of it as it can.
func TestJoined(t *testing.T) {
	const key = "qk7ab9cd3ef5gh7jk9mn1pq3rs5tu7"
	for _, tt := range []struct{ head, rest, want string }{
		{"t1 done", ": wrote the tests", "t1 done: wrote the tests"},
		{"t1 done output api_key", ": " + key, "t1 done output api_key " + secrets.NotShown},
		{"", "api_key: " + key, secrets.NotShown},
		{"WF_AKIA6QT5SE3KDFPQJMRK", "=plans/002.md", secrets.Hidden}, // the head by itself
	} {
		if got := secrets.Joined(tt.head, tt.rest); got != tt.want {
			t.Errorf("Joined(%q, %q) = %q, want %q", tt.head, tt.rest, got, tt.want)
		}
	}
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{"plan", "review"}, "plan, review"},
		{[]string{"api_key", key, "t3"}, "api_key, " + secrets.NotShown + ", t3"},
	} {
		if got := secrets.JoinNames(tt.names, ", "); got != tt.want {
			t.Errorf("JoinNames(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}
