package migrate

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string // "" means refused
	}{
		{"rfc3339 Z", "2026-02-11T14:00:00Z", "2026-02-11T14:00:00Z"},
		{"rfc3339 offset", "2026-02-11T14:00:00+01:00", "2026-02-11T13:00:00Z"},
		{"fraction kept", "2026-02-11T14:00:00.123456Z", "2026-02-11T14:00:00.123456Z"},
		{"offset without colon", "2026-02-11T14:00:00-0530", "2026-02-11T19:30:00Z"},
		{"no zone means UTC", "2026-02-11T14:00:00", "2026-02-11T14:00:00Z"},
		{"space for T", "2026-02-11 14:00:00Z", "2026-02-11T14:00:00Z"},
		{"space and no zone", "2026-02-11 14:00:00", "2026-02-11T14:00:00Z"},
		{"space and UTC word", "2026-02-11 14:00:00 UTC", "2026-02-11T14:00:00Z"},
		{"lower case t and z", "2026-02-11t14:00:00z", "2026-02-11T14:00:00Z"},
		{"minutes only", "2026-02-11T14:00Z", "2026-02-11T14:00:00Z"},
		{"date only", "2026-02-11", "2026-02-11T00:00:00Z"},
		{"padded", "  2026-02-11T14:00:00Z\n", "2026-02-11T14:00:00Z"},
		{"unix seconds", json.Number("1770818400"), "2026-02-11T14:00:00Z"},
		{"unix millis", json.Number("1770818400500"), "2026-02-11T14:00:00.5Z"},
		{"unix seconds as string", "1770818400", "2026-02-11T14:00:00Z"},
		{"small number", json.Number("24"), ""},
		{"fractional number", json.Number("1770818400.5"), ""},
		{"negative number", json.Number("-1770818400"), ""},
		{"year 1970 seconds", json.Number("86400"), ""},
		{"word", "yesterday", ""},
		{"empty", "", ""},
		{"bad month", "2026-13-11T14:00:00Z", ""},
		{"boolean", true, ""},
		{"object", map[string]any{}, ""},
		// Times the record cannot hold: Go's zero time, which the record reads as unset (and
		// Go programs write for a time never set), and years past 9999 once in UTC, which
		// encoding/json cannot write.
		{"go zero time", "0001-01-01T00:00:00Z", ""},
		{"year 10000 in UTC", "9999-12-31T23:00:00-05:00", ""},
		{"year -1 in UTC", "0000-01-01T00:00:00+01:00", ""},
		{"year 0", "0000-06-01T00:00:00Z", "0000-06-01T00:00:00Z"},
	}
	// Such a time is kept under legacy, and the record is made of the usable ones.
	for _, doc := range []string{
		`{"type":"APEX","phase":"plan","startedAt":"0001-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z"}`,
		`{"type":"APEX","phase":"plan","startedAt":"2026-01-01T00:00:00Z","lastUpdated":"9999-12-31T23:00:00-05:00"}`,
	} {
		r, err := Convert(Seed001, []byte(doc), Extra{}, testNow)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if !r.CreatedAt.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || !r.UpdatedAt.Equal(r.CreatedAt) ||
			!strings.Contains(string(r.Extra["legacy"]), `"fields":{"`) {
			t.Fatalf("%s: created %v updated %v legacy %s", doc, r.CreatedAt, r.UpdatedAt, r.Extra["legacy"])
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseTime(tc.in)
			if tc.want == "" {
				if ok {
					t.Errorf("parseTime(%v) = %v, want refused", tc.in, got)
				}
				return
			}
			if !ok || got.Format(time.RFC3339Nano) != tc.want {
				t.Errorf("parseTime(%v) = %v, %v; want %s", tc.in, got.Format(time.RFC3339Nano), ok, tc.want)
			}
		})
	}
}

func TestNormTTL(t *testing.T) {
	tests := []struct {
		in   any
		want string // "" means refused
	}{
		{"24h", "24h"}, {"1h30m", "90m"}, {" 48H ", "48h"}, {"90m", "90m"}, {"0.5h", "30m"},
		{"7d", "7d"}, {"1d", "1d"}, {"2w", "14d"}, {"3650d", "3650d"}, {"120m0s", "2h"}, {"1440m0s", "1d"},
		{"0h", ""}, {"-1h", ""}, {"0d", ""}, {"forever", ""}, {"", ""}, {"24", ""},
		{json.Number("24"), ""}, {true, ""}, {"99999d", ""},
		// The record holds whole minutes, hours or days up to 3650d (workflow.ParseTTL).
		{"30s", ""}, {"90s", ""}, {"3651d", ""}, {"999w", ""}, {"87601h", ""},
		// Whatever the record reads as a time (workflow.SameTTL), migration reads the same:
		// these were refused, and the record took the default 24h.
		{"1d12h", "36h"}, {"0.5d", "12h"}, {"1.5d", "36h"},
		// A sign given twice says no time: it was migrated as 5h.
		{"--5h", ""},
	}
	for _, tc := range tests {
		got, ok := normTTL(tc.in)
		if ok != (tc.want != "") || (ok && got != tc.want) {
			t.Errorf("normTTL(%v) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
		if _, err := workflow.ParseTTL(got); ok && err != nil {
			t.Errorf("normTTL(%v) = %q, which the record refuses: %v", tc.in, got, err)
		}
	}
	// A ttl the record cannot hold is kept under legacy, and the migration goes on.
	r, err := Convert(Seed001, []byte(`{"type":"APEX","phase":"plan","ttl":"30s"}`), Extra{}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if r.TTL != "24h" || !strings.Contains(string(r.Extra["legacy"]), `"fields":{"ttl":"30s"}`) {
		t.Fatalf("ttl %q, legacy %s", r.TTL, r.Extra["legacy"])
	}
}

func TestSanitizeName(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"APEX", "apex"},
		{"REQUIREMENTS", "requirements"},
		{"git-commit", "git-commit"},
		{"Git Commit", "git-commit"},
		{"x_archive", "x_archive"},
		{"  Fix -- Plan!! ", "fix-plan"},
		{"--lead", "lead"},
		{"_x", "x"},
		{"a.b", "a-b"},
		{"Über", "ber"},
		{"???", ""},
		{"", ""},
		{strings.Repeat("\x00", 100), ""},
		{strings.Repeat("abcdefghij", 7) + "-x", "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd"},
		{strings.Repeat("a", 63) + "-b", strings.Repeat("a", 63)},
	}
	for _, tc := range tests {
		got := sanitizeName(tc.in, false)
		if got != tc.want {
			t.Errorf("sanitizeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got != "" && workflow.ValidName(got) != nil {
			t.Errorf("sanitizeName(%q) = %q is not a valid name", tc.in, got)
		}
	}
}

func TestSanitizeID(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"wf-2026-02-11-auth", "wf-2026-02-11-auth"},
		{"7C9E6679-7425-40DE-944B-E07FC1F90AE7", "7c9e6679-7425-40de-944b-e07fc1f90ae7"},
		{"Feature X/42: Checkout", "feature-x-42-checkout"},
		{"../../etc/passwd", "etc-passwd"},
		{"a..b", "a.b"},
		{"a-.b", "a.b"},
		{".hidden", "hidden"},
		{"trailing.", "trailing"},
		{"con", "wf-con"},
		{"NUL.json", "wf-nul.json"},
		{"com1", "wf-com1"},
		{"lpt9.x", "wf-lpt9.x"},
		{"console", "console"},
		{"a\x00b", "a-b"},
		{"", ""},
	}
	for _, tc := range tests {
		got := sanitizeID(tc.in)
		if got != tc.want {
			t.Errorf("sanitizeID(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got != strings.ToLower(got) || got != "" && !idRe().MatchString(got) {
			t.Errorf("sanitizeID(%q) = %q is not a valid id", tc.in, got)
		}
	}
}

func TestDeriveID(t *testing.T) {
	data := []byte(`{"type":"APEX"}`)
	at := time.Date(2026, 11, 22, 17, 30, 0, 0, time.UTC)
	id := deriveID("apex", at, data)
	if id != deriveID("apex", at, data) {
		t.Fatal("deriveID is not deterministic")
	}
	if want := "apex-20261122T173000Z-"; len(id) != len(want)+4 || id[:len(want)] != want {
		t.Errorf("deriveID = %q, want %s plus 4 hex digits", id, want)
	}
	if deriveID("apex", at, []byte(`{"type":"DEBUG"}`)) == id {
		t.Errorf("different originals got the same id")
	}
	long := deriveID("a-very-long-workflow-type-name-that-goes-on-and-on-and-on", at, data)
	if !idRe().MatchString(long) || len(long) > 64 {
		t.Errorf("deriveID with a long type = %q (%d bytes)", long, len(long))
	}
}

func TestAsCount(t *testing.T) {
	tests := []struct {
		in   any
		want int
		ok   bool
	}{
		{json.Number("2"), 2, true}, {json.Number("2.0"), 2, true}, {"3", 3, true}, {" 4 ", 4, true},
		{json.Number("2.5"), 0, false}, {json.Number("-1"), 0, false}, {"two", 0, false},
		{true, 0, false}, {json.Number("1e12"), 0, false},
	}
	for _, tc := range tests {
		got, ok := asCount(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("asCount(%v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// idRe: carried ids are lower-cased, but a derived id keeps workflow.NewID's upper-case T and
// Z in its time stamp, which the store's id check allows.
var idRe = lazyre.New(`^[a-z0-9][a-zA-Z0-9._-]{0,63}$`)
