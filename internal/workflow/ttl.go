package workflow

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultTTL is the TTL of a workflow whose record and definition set none.
const DefaultTTL = "24h"

// maxTTL bounds a TTL so that last activity + TTL cannot overflow.
const maxTTL = 3650 * 24 * time.Hour

// ParseTTL parses a TTL: a positive whole number followed by one unit, m (minutes), h (hours)
// or d (days), such as 30m, 24h or 7d. An empty string is the default, 24h. Anything else
// (1.5h, 1h30m, 24, 0h, -1d, 24H) is refused.
func ParseTTL(s string) (time.Duration, error) {
	s = cmp.Or(s, DefaultTTL)
	d, same, why := readTTL(s)
	switch {
	case same != "":
		return 0, sameErr(s, same)
	case why != "":
		return 0, fmt.Errorf("ttl %s is not valid: %s; write a whole number and one unit, m, h or d (for example 30m, 24h, 7d)", Quote(s), why)
	}
	return d, nil
}

// readTTL reads s: d when it is in ParseTTL's form; else same, the same time in that form,
// when it has one, or why, what is wrong with it.
func readTTL(s string) (d time.Duration, same, why string) {
	if len(s) < 2 {
		return 0, "", "no unit"
	}
	num, unit := s[:len(s)-1], s[len(s)-1]
	var per time.Duration
	switch unit {
	case 'm':
		per = time.Minute
	case 'h':
		per = time.Hour
	case 'd':
		per = 24 * time.Hour
	case 'M', 'H', 'D':
		return 0, "", fmt.Sprintf("units are lower case (%c)", unit+'a'-'A')
	default:
		if '0' <= unit && unit <= '9' {
			return 0, "", "no unit"
		}
		if same, why = otherTTL(s); same != "" || why != "" {
			return 0, same, why
		}
		return 0, "", "unknown unit"
	}
	if strings.ContainsFunc(num, func(c rune) bool { return c < '0' || c > '9' }) {
		if same, why = otherTTL(s); same != "" || why != "" {
			return 0, same, why
		}
		return 0, "", "the number must be whole digits"
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > int64(maxTTL/per) {
		return 0, "", tooLong
	}
	if n == 0 {
		return 0, "", noTime
	}
	return time.Duration(n) * per, "", ""
}

// What is wrong with a ttl that says a time, in any form.
const (
	tooLong = "too large (at most 3650d)"
	noTime  = "must be more than zero"
)

// SameTTL is s, a duration in another form ("1d12h", "1h30m", "1.5h", "120s"), in ParseTTL's
// form, in the largest unit that keeps it whole; "" when s is no such duration or has no
// such form (not whole minutes, not positive, over the limit).
func SameTTL(s string) string {
	_, same, _ := readTTL(s)
	return same
}

// TTLWhy says why ttl s, not in ParseTTL's form, is refused (too large, not whole minutes):
// what ParseTTL says, for a refusal whose hint ("a duration such as 24h") would not.
func TTLWhy(s string) string {
	_, _, why := readTTL(s)
	return why
}

// otherTTL reads s, in no form of ParseTTL's, as a Go duration, which may start with days
// ("1d12h", "1.5h", "90s"), parsing it once: same is the same time in ParseTTL's form, in
// the largest unit that keeps it whole, or why says what is wrong with the time it says;
// both are "" when s says no time.
func otherTTL(s string) (same, why string) {
	d, ok := goTTL(s)
	switch {
	case !ok:
		return "", ""
	case d > maxTTL:
		return "", tooLong
	case d <= 0:
		return "", noTime
	case d%time.Minute != 0:
		return "", "a ttl is whole minutes, at least 1m"
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d", ""
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h", ""
	}
	return strconv.FormatInt(int64(d/time.Minute), 10) + "m", ""
}

// goTTL reads s as a Go duration, signed as a whole ("-1d12h"), that may start with a number
// of days ("1d12h", "0.5d"); one past maxTTL is given as maxTTL+1, as it may not fit in a
// Duration.
func goTTL(s string) (time.Duration, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		return 0, false // one sign: ParseDuration would read a second ("--5h" as 5h)
	}
	var d time.Duration
	if days, rest, ok := strings.Cut(s, "d"); ok {
		// The days are a number alone: in "1h1d" they are no "1h1".
		if days == "" || strings.ContainsFunc(days, func(c rune) bool { return c != '.' && (c < '0' || c > '9') }) || strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			return 0, false
		}
		n, err := strconv.ParseFloat(days, 64)
		if err != nil {
			return 0, false
		}
		if n > float64(maxTTL/(24*time.Hour)) {
			return maxTTL + 1, true
		}
		if d, err = time.ParseDuration(days + "h"); err != nil {
			return 0, false
		}
		d, s = 24*d, cmp.Or(rest, "0")
	}
	n, err := time.ParseDuration(s)
	if err != nil {
		return 0, false
	}
	d = min(d+min(n, maxTTL+1), maxTTL+1) // n alone may be near the largest Duration
	if neg {
		d = -d
	}
	return d, true
}

// sameErr refuses ttl s, giving same, its equivalent in ParseTTL's form, as the step.
func sameErr(s, same string) error {
	return fmt.Errorf("ttl %s is not valid: write %s, the same time as a whole number and one unit (m, h or d)", Quote(s), same)
}

// ExpiresAt is last activity + TTL.
func (r *Record) ExpiresAt() (time.Time, error) {
	ttl, err := ParseTTL(r.TTL)
	if err != nil {
		return time.Time{}, fmt.Errorf("workflow %s: %s", r.WorkflowID, r.ttlUnread())
	}
	last := r.LastActivity()
	if last.IsZero() {
		return time.Time{}, fmt.Errorf("workflow %s records no time of last activity (changed_at, updated_at, created_at), so its ttl cannot be counted; it does not expire until one is set", r.WorkflowID)
	}
	return last.Add(ttl), nil
}

// ttlUnread says that r's ttl, one ParseTTL refuses, keeps it from expiring, and the step
// that ends it: no tool or command sets a running workflow's ttl.
func (r *Record) ttlUnread() string {
	return fmt.Sprintf("ttl %s on record is not one Cairn reads, so the workflow does not expire; all else works, and `cairn archive` ends it (kept, not lost) when the user wants", Quote(r.TTL))
}

// ExpiredAfter is how every text says r expired: "expired after 24h without a change".
func (r *Record) ExpiredAfter() string {
	return "expired after " + cmp.Or(r.TTL, DefaultTTL) + " without a change"
}

// Expired reports whether an active workflow has outlived its TTL: now > last activity + TTL,
// so at exactly the deadline it is still live. Only active workflows expire. A record whose
// TTL does not parse, or that records no time at all, is reported as an error, never silently
// expired.
func (r *Record) Expired(now time.Time) (bool, error) {
	if r == nil || r.Status != StatusActive {
		return false, nil
	}
	at, err := r.ExpiresAt()
	if err != nil {
		return false, err
	}
	return now.After(at), nil
}

// Expire marks an expired workflow: the result's Archive is the record with status expired
// (for the engine to archive, never delete), Record is nil (the active slot is cleared) and L2
// is the expiry line. It refuses a workflow that has not expired. A dry run is the engine
// simply not writing the result.
func Expire(r *Record, now time.Time) (Result, error) {
	expired, err := r.Expired(now)
	if err != nil {
		return Result{}, err
	}
	if !expired {
		return Result{}, fmt.Errorf("workflow %s has not expired (last activity %s, ttl %s); nothing was changed",
			r.WorkflowID, r.LastActivity().UTC().Format(time.RFC3339), cmp.Or(r.TTL, DefaultTTL))
	}
	old := r.Clone()
	old.Status = StatusExpired
	return Result{
		Changed: true,
		Event:   EventExpire,
		From:    r.State,
		To:      r.State,
		Archive: old,
		L2:      ExpiryLine(r),
	}, nil
}
