package store_test

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestQuarantineIsDurable: once Quarantine returns, a power loss keeps the damaged file in
// quarantine/ and not in its place; a power loss at any moment before leaves it in one of the
// two, never lost.
func TestQuarantineIsDurable(t *testing.T) {
	const name = "claims.json"
	for k := 1; ; k++ {
		f := simfs.New()
		s, err := store.Open(t.TempDir(), store.WithFS(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := durable.WriteFile(f, name, []byte("{damaged"), 0o600); err != nil {
			t.Fatal(err)
		}
		f.CrashAt = f.Ops() + k
		n, err := s.Quarantine(name, errors.New("damaged"))
		after := f.Recover()
		_, inPlace := after.Lstat(name)
		names, _ := after.ReadDirNames("quarantine")
		if inPlace != nil && len(names) == 0 {
			t.Fatalf("power lost at operation %d of Quarantine (%v): the damaged file is lost", k, err)
		}
		if err == nil && (inPlace == nil || len(names) != 1 || path.Base(n.Path) != names[0]) {
			t.Fatalf("Quarantine returned %q, then after a power loss: still in place %v, quarantine/ %v", n.Path, inPlace == nil, names)
		}
		crashed := f.Crashed()
		s.Close()
		if !crashed {
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ran to its end after %d power losses", k-1)
			return
		}
		if k > 50 {
			t.Fatal("Quarantine never ran to its end")
		}
	}
}

// TestQuarantineNeverOverwrites: a file that appears under the quarantine name Cairn picked,
// between the pick and the move, is kept, and the damaged file goes to the next name. Before,
// the move replaced it.
func TestQuarantineNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	d := openDir(t, dir)
	at := fixedNow.UTC().Format("20060102T150405.000Z")
	earlier := []byte("quarantined by another process")
	take := "quarantine/claims.json-" + at
	f := &appearFS{FS: d, prefix: take, onLook: true, content: earlier}
	s := mustOpen(t, dir, store.WithFS(f), store.WithClock(func() time.Time { return fixedNow }))
	if err := durable.WriteFile(d, "claims.json", []byte("{damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := s.Quarantine("claims.json", errors.New("damaged"))
	if err != nil {
		t.Fatal(err)
	}
	if f.appeared != take {
		t.Fatal("the quarantine name was never looked at or moved onto")
	}
	if got, err := durable.ReadFile(d, take, 1<<10); err != nil || string(got) != string(earlier) {
		t.Fatalf("the earlier quarantined file now holds %q (%v)", got, err)
	}
	if want := take + "-2"; n.Path != want {
		t.Fatalf("quarantined as %s, want %s", n.Path, want)
	}
	if got, err := durable.ReadFile(d, n.Path, 1<<10); err != nil || string(got) != "{damaged" {
		t.Fatalf("%s holds %q (%v), want the damaged file", n.Path, got, err)
	}
}

// TestQuarantineNoticeCutsReason: the reason a notice gives for a file set aside is cut at 200
// characters. Cut at 200 bytes, it split a character in two (a state directory under a name
// such as /home/josé): the notice the user and the model read held invalid UTF-8. Cut right
// after a token glued to more text (a path such as /home/u/ghp_…-x/), it made a secret's shape
// the reason did not hold: the cut now ends before that word.
func TestQuarantineNoticeCutsReason(t *testing.T) {
	tok := secrettest.GluedToken(t)
	for _, tc := range []struct{ name, reason string }{
		{"a wide character", strings.Repeat("a", 199) + "é and the rest"},
		{"a glued token", strings.Repeat("a", 199-len(strings.TrimSuffix(tok, "-x"))-1) + " " + tok + "/claims.json is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			if err := os.WriteFile(filepath.Join(dir, "claims.json"), []byte("{damaged"), 0o600); err != nil {
				t.Fatal(err)
			}
			n, err := s.Quarantine("claims.json", errors.New(tc.reason))
			if err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(n.Message) {
				t.Errorf("notice %q is not valid UTF-8", n.Message)
			}
			if f := secrets.ScanString(n.Message); f != nil {
				t.Errorf("notice %q has a secret's shape (%s) its reason did not hold", n.Message, f.Rule)
			}
			if !strings.Contains(n.Message, "(aaaaaaaaaa") {
				t.Errorf("notice %q lost the reason's start", n.Message)
			}
		})
	}
}

// TestQuarantineSyncFailedSaysWhere: a move into quarantine/ whose directory sync then fails
// (either end) is refused naming where the file is now, never saying it was left in place.
// Before, the error named no place: the file was gone from where the user would look.
func TestQuarantineSyncFailedSaysWhere(t *testing.T) {
	for _, d := range []string{".", "quarantine"} {
		dir := t.TempDir()
		f := &durabletest.DirSyncFails{FS: openDir(t, dir), Dir: d}
		s := mustOpen(t, dir, store.WithFS(f), store.WithClock(func() time.Time { return fixedNow }))
		if err := os.WriteFile(filepath.Join(dir, "claims.json"), []byte("{damaged"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "quarantine"), 0o700); err != nil { // its sync is not the move's
			t.Fatal(err)
		}
		f.Fails.Store(1)
		_, err := s.Quarantine("claims.json", errors.New("damaged"))
		if err == nil || !strings.Contains(err.Error(), "quarantine/claims.json-") || strings.Contains(err.Error(), "left as it was") {
			t.Errorf("sync of %s failed: %v; want the error to say where the file is", d, err)
		}
	}
}
