package workflow_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestParseTTL(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"": 24 * time.Hour, "24h": 24 * time.Hour, "30m": 30 * time.Minute, "7d": 7 * 24 * time.Hour,
		"1m": time.Minute, "3650d": 3650 * 24 * time.Hour,
	} {
		got, err := workflow.ParseTTL(in)
		if err != nil || got != want {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"24", "h", "0h", "-1d", "1.5h", "1h30m", "24H", "1w", " 24h", "3651d", "99999999999999999999h", "+1h", "1e3m"} {
		if _, err := workflow.ParseTTL(in); err == nil {
			t.Errorf("ParseTTL(%q) accepted", in)
		}
	}
}

func TestExpiryBoundaries(t *testing.T) {
	def := mustDef(t, "apex")
	r := walk(t, def, mustStart(t, def), "plan", "implement") // updated_at = t0 + 2m
	last := t0.Add(2 * time.Minute)
	for _, tc := range []struct {
		name string
		ttl  string
		now  time.Time
		want bool
	}{
		{"default-just-before", "", last.Add(24*time.Hour - time.Nanosecond), false},
		{"default-at-deadline", "", last.Add(24 * time.Hour), false},
		{"default-just-after", "", last.Add(24*time.Hour + time.Nanosecond), true},
		{"30m-before", "30m", last.Add(29*time.Minute + 59*time.Second), false},
		{"30m-after", "30m", last.Add(30*time.Minute + time.Second), true},
		{"7d-before", "7d", last.Add(7*24*time.Hour - time.Second), false},
		{"7d-after", "7d", last.Add(7*24*time.Hour + time.Second), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := r.Clone()
			c.TTL = tc.ttl
			got, err := c.Expired(tc.now)
			if err != nil || got != tc.want {
				t.Fatalf("Expired = %v, %v; want %v", got, err, tc.want)
			}
			res, err := workflow.Expire(c, tc.now)
			if !tc.want {
				if err == nil {
					t.Fatal("Expire accepted a live workflow")
				}
				return
			}
			if err != nil || res.Record != nil || res.Archive.Status != workflow.StatusExpired || c.Status != workflow.StatusActive {
				t.Fatalf("Expire: %v %+v", err, res)
			}
			if res.L2 != "Expired APEX workflow at implement for “add login”, archived" {
				t.Fatalf("L2 %q", res.L2)
			}
		})
	}
	// Falls back to created_at when updated_at is missing; a bad TTL is an error, not expiry;
	// only active workflows expire.
	c := r.Clone()
	c.UpdatedAt, c.ChangedAt = time.Time{}, time.Time{}
	if exp, _ := c.Expired(t0.Add(24*time.Hour + time.Second)); !exp {
		t.Fatal("created_at fallback")
	}
	// expire_ttl said "write 90m, ...", a step no tool takes: none sets a running workflow's ttl.
	c.TTL = "1.5h"
	if _, err := c.Expired(t0.Add(48 * time.Hour)); err == nil || strings.Contains(err.Error(), "write") || !strings.Contains(err.Error(), "`cairn archive` ends it") {
		t.Fatalf("bad ttl: %v, want it reported with the step that ends the workflow", err)
	}
	done, _ := workflow.Complete(r, "ok", last, alice)
	if exp, _ := done.Record.Expired(last.Add(1000 * time.Hour)); exp {
		t.Fatal("a completed workflow expired")
	}
}

// A refused TTL says what is wrong with it: a number alone ("ttl: 24", the YAML integer a
// person writes for a day) was told "unknown unit", as if it had one; a unit in capitals
// was told the same, though the unit is right but for its case.
func TestParseTTLSaysWhatIsWrong(t *testing.T) {
	for in, want := range map[string]string{
		"24":    `ttl "24" is not valid: no unit;`,
		"0":     `ttl "0" is not valid: no unit;`,
		"24H":   `ttl "24H" is not valid: units are lower case (h);`,
		"7D":    `ttl "7D" is not valid: units are lower case (d);`,
		"1w":    `ttl "1w" is not valid: unknown unit;`,
		"never": `ttl "never" is not valid: unknown unit;`,
		// A duration in another form is told its equivalent in this one, not that "the
		// number must be whole digits".
		"1d12h": `ttl "1d12h" is not valid: write 36h, the same time as a whole number and one unit (m, h or d)`,
		"1h30m": `ttl "1h30m" is not valid: write 90m,`,
		"1.5h":  `ttl "1.5h" is not valid: write 90m,`,
		"0.5d":  `ttl "0.5d" is not valid: write 12h,`,
		"48h0m": `ttl "48h0m" is not valid: write 2d,`,
		"120s":  `ttl "120s" is not valid: write 2m,`,
		// None: the number is what is wrong.
		"1d-1h": `ttl "1d-1h" is not valid: the number must be whole digits;`,
		"1h1d":  `ttl "1h1d" is not valid: the number must be whole digits;`, // it was told "write 2d"
		// Not whole minutes, in any unit: it told "500ms" that seconds are not a unit.
		"90s":   `ttl "90s" is not valid: a ttl is whole minutes, at least 1m;`,
		"1s":    `ttl "1s" is not valid: a ttl is whole minutes, at least 1m;`,
		"1m30s": `ttl "1m30s" is not valid: a ttl is whole minutes, at least 1m;`,
		"500ms": `ttl "500ms" is not valid: a ttl is whole minutes, at least 1m;`,
		// A time not more than zero, or too large, in another form is told so, not that "the
		// number must be whole digits".
		"0m":                    `ttl "0m" is not valid: must be more than zero;`,
		"0h30s":                 `ttl "0h30s" is not valid: a ttl is whole minutes, at least 1m;`,
		"0d0h":                  `ttl "0d0h" is not valid: must be more than zero;`,
		"-1h":                   `ttl "-1h" is not valid: must be more than zero;`,
		"-1d":                   `ttl "-1d" is not valid: must be more than zero;`,
		"3651d":                 `ttl "3651d" is not valid: too large (at most 3650d);`,
		"99999999999999999999h": `ttl "99999999999999999999h" is not valid: too large (at most 3650d);`,
		"9999999d1h":            `ttl "9999999d1h" is not valid: too large (at most 3650d);`,
		"87601h0m":              `ttl "87601h0m" is not valid: too large (at most 3650d);`,
		"3650d1m":               `ttl "3650d1m" is not valid: too large (at most 3650d);`,
		"1d2562047h":            `ttl "1d2562047h" is not valid: too large (at most 3650d);`, // days and hours past a Duration
		"1e3h":                  `ttl "1e3h" is not valid: the number must be whole digits;`,
		// One sign: "--5h" was told to write 5h, the same time.
		"--5h": `ttl "--5h" is not valid: the number must be whole digits;`,
		"+-1d": `ttl "+-1d" is not valid: the number must be whole digits;`,
	} {
		if _, err := workflow.ParseTTL(in); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseTTL(%q): %v; want it to start %q", in, err, want)
		}
	}
}
