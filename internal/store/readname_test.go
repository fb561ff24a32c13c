package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

// A read checks only the name's shape up front and scans it for secrets only before an
// error: it must still refuse, with ValidName's own error, every name ValidName refuses, and
// never repeat a secret.
func TestReadRefusesWhatValidNameRefuses(t *testing.T) {
	s, _ := newStore(t)
	if err := s.Write("plan_v2", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	type tc struct{ name, core string }
	cases := []tc{{"plan_v2", ""}, {"missing", ""}, {"../x", ""}, {"con", ""}, {"Plan", ""}, {"", ""}}
	for _, sh := range secrettest.Shapes() {
		cases = append(cases, tc{sh.Text, sh.Core}, tc{strings.ToLower(sh.Text), strings.ToLower(sh.Core)})
	}
	refused := 0
	for _, c := range cases {
		data, err := s.Read(c.name)
		want := store.ValidName(c.name)
		switch {
		case want != nil:
			refused++
			var ne *store.NameError
			if !errors.As(err, &ne) || err.Error() != want.Error() {
				t.Errorf("Read(%.12q...) = %v, want ValidName's %v", c.name, err, want)
			}
		case c.name == "plan_v2":
			if err != nil || string(data) != `{"ok":true}` {
				t.Errorf("Read(plan_v2) = %q, %v", data, err)
			}
		case !errors.Is(err, store.ErrNotFound):
			t.Errorf("Read(%.12q...) = %v, want not found", c.name, err)
		}
		if want != nil && c.core != "" && strings.Contains(err.Error(), c.core) {
			t.Errorf("Read's error repeats the secret: %v", err)
		}
	}
	if refused < 5 {
		t.Fatalf("only %d names refused: the table no longer tests refusals", refused)
	}
}
