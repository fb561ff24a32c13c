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
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("ttl %s is not valid: %s; write a whole number and one unit, m, h or d (for example 30m, 24h, 7d)", Quote(s), why)
	}
	if len(s) < 2 {
		return bad("no unit")
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
		return bad(fmt.Sprintf("units are lower case (%c)", unit+'a'-'A'))
	default:
		if '0' <= unit && unit <= '9' {
			return bad("no unit")
		}
		if same := SameTTL(s); same != "" {
			return 0, sameErr(s, same)
		}
		if why := TTLWhy(s); why != "" {
			return bad(why)
		}
		return bad("unknown unit")
	}
	if strings.ContainsFunc(num, func(c rune) bool { return c < '0' || c > '9' }) {
		if same := SameTTL(s); same != "" {
			return 0, sameErr(s, same)
		}
		return bad("the number must be whole digits")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > int64(maxTTL/per) {
		return bad("too large (at most 3650d)")
	}
	if n == 0 {
		return bad("must be more than zero")
	}
	return time.Duration(n) * per, nil
}

// SameTTL is s, a duration in another form ("1d12h", "1h30m", "1.5h", "120s"), in ParseTTL's
// form, in the largest unit that keeps it whole; "" when s is no such duration or has no
// such form (not whole minutes, not positive, over the limit).
func SameTTL(s string) string {
	d, ok := goTTL(s)
	switch {
	case !ok || d%time.Minute != 0:
		return ""
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
}

// goTTL reads s as a Go duration, with days ("1d12h"), within ParseTTL's range.
func goTTL(s string) (time.Duration, bool) {
	var d time.Duration
	if days, rest, ok := strings.Cut(s, "d"); ok {
		n, err := time.ParseDuration(days + "h")
		if err != nil || n < 0 || n > maxTTL/24 {
			return 0, false
		}
		d, s = 24*n, cmp.Or(rest, "0")
	}
	n, err := time.ParseDuration(s)
	if err != nil || n < 0 || n > maxTTL {
		return 0, false
	}
	d += n
	return d, d > 0 && d <= maxTTL
}

// TTLWhy says why ttl s is refused when a refusal's hint ("a duration such as 24h") would
// not: s counts seconds ("1s", "90s") that no whole number of minutes gives. "" otherwise.
func TTLWhy(s string) string {
	if d, ok := goTTL(s); ok && d%time.Minute != 0 {
		return "seconds are not a unit; the shortest ttl is 1m"
	}
	return ""
}

// sameErr refuses ttl s, giving same, its equivalent in ParseTTL's form, as the step.
func sameErr(s, same string) error {
	return fmt.Errorf("ttl %s is not valid: write %s, the same time as a whole number and one unit (m, h or d)", Quote(s), same)
}

// ExpiresAt is last activity + TTL.
func (r *Record) ExpiresAt() (time.Time, error) {
	ttl, err := ParseTTL(r.TTL)
	if err != nil {
		return time.Time{}, fmt.Errorf("workflow %s: %w", r.WorkflowID, err)
	}
	last := r.LastActivity()
	if last.IsZero() {
		return time.Time{}, fmt.Errorf("workflow %s records no time of last activity (changed_at, updated_at, created_at), so its ttl cannot be counted; it does not expire until one is set", r.WorkflowID)
	}
	return last.Add(ttl), nil
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
