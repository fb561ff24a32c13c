package store_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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

// A document whose object keys repeat is refused by the strict gate, whose error quotes the
// key: when that key is a secret the refusal must be the secret finding, never the key.
func TestDuplicateSecretKeyIsNotRepeated(t *testing.T) {
	for _, sh := range secrettest.Shapes() {
		for _, key := range []string{sh.Text, strings.Repeat("x", 80) + sh.Text} {
			k, _ := json.Marshal(key)
			doc := []byte(`{` + string(k) + `:1,"n":{` + string(k) + `:2,` + string(k) + `:3}}`)
			big := append([]byte(`{"pad":"`+strings.Repeat("p", 70<<10)+`",`), doc[1:]...)
			for _, d := range [][]byte{doc, big} {
				err := store.CheckDocument(d)
				if err == nil {
					t.Fatalf("%s: a document with a repeated key was accepted", sh.Name)
				}
				if core := sh.Core[:min(len(sh.Core), 24)]; strings.Contains(err.Error(), core) {
					t.Errorf("%s (%d bytes): the refusal repeats the secret: %v", sh.Name, len(d), err)
				}
			}
		}
	}
}

// A document edited by hand with a repeated key is damaged, and the error says so by the key's
// offset: the key may be a secret, which a read must not print.
func TestDamagedDocumentRefusalRepeatsNoKey(t *testing.T) {
	s, dir := newStore(t)
	if err := s.Write("plan", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint("cp", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	for _, sh := range secrettest.Shapes() {
		k, _ := json.Marshal(sh.Text)
		doc := []byte(`{"a":{` + string(k) + `:1,` + string(k) + `:2}}`)
		for file, read := range map[string]func() ([]byte, error){
			"plan.json":           func() ([]byte, error) { return s.Read("plan") },
			"checkpoints/cp.json": func() ([]byte, error) { return s.LoadCheckpoint("cp") },
		} {
			if err := os.WriteFile(filepath.Join(dir, file), doc, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := read()
			if err == nil || !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("%s read: %v", file, err)
			}
			if probe := sh.Core[:min(len(sh.Core), 16)]; strings.Contains(err.Error(), probe) {
				t.Errorf("%s: %s: the error repeats the key: %v", sh.Name, file, err)
			}
		}
	}
}
