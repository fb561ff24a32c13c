package lazyre_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/lazyre"
)

func TestNew(t *testing.T) {
	tests := []struct {
		expr, s string
		match   bool
	}{
		{`^[0-9]{1,4}d$`, "30d", true},
		{`^[0-9]{1,4}d$`, "30w", false},
		{`(?i)^secret$`, "SECRET", true},
	}
	for _, tt := range tests {
		re := lazyre.New(tt.expr)
		first := re()
		if got := first.MatchString(tt.s); got != tt.match {
			t.Errorf("New(%q)().MatchString(%q) = %v, want %v", tt.expr, tt.s, got, tt.match)
		}
		if second := re(); second != first {
			t.Errorf("New(%q): a second call compiled the expression again", tt.expr)
		}
	}
}

func TestNewPanicsOnFirstUse(t *testing.T) {
	re := lazyre.New(`(`) // not compiled yet: no panic here
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic on first use")
		}
	}()
	re()
}
