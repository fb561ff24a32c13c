package secrets

import (
	"strings"
	"unicode/utf8"
)

// look is what one scan of a text remembers of the look-aheads before its keywords (an
// assignment near, a value's runs of bytes, its digits and symbols): each resumes where the
// one before it at an earlier keyword stopped, so that the keywords of a flood (secret1=,
// a-secret=1, client_secret: 1 repeated), each looking up to 320 bytes ahead, read the text
// about once between them and not once each (BenchmarkScanFlood1M).
type look struct {
	assign, digit, value, base64 search
	valueEnd, symbol, valueDigit search
}

// ahead lists the look-aheads a rule's keyword must pass; the zero value, none.
type ahead struct {
	base64 int  // if not 0, a run of base64 within this reach (base64RunAhead)
	value  int  // if not 0, a digit and a value's end within this span (digitAhead, valueEndsAhead)
	symbol bool // a value with a symbol and a digit (symbolAhead)
}

// passes reports whether what follows the keyword at i passes a's look-aheads. They are
// called here, not through a function a rule holds, so that l stays on the scan's stack:
// the JSON scan runs one scan for each member it reads.
func (l *look) passes(a *ahead, s string, i int) bool {
	return (a.base64 == 0 || base64RunAhead(l, s, i, a.base64)) &&
		(a.value == 0 || digitAhead(l, s, i, a.value) && valueEndsAhead(l, s, i, a.value)) &&
		(!a.symbol || symbolAhead(l, s, i))
}

// A class is what a search finds: a byte of set, or else a run of a value's bytes (of
// base64's when base64) or a byte past ASCII. Each byte is judged inline, not by a
// function a class holds: at every byte of ordinary text an indirect call cost a 1 MB
// record a fifth more than the loops it replaced.
type class struct {
	set  string
	runs bool
	// base64 makes runs of base64's bytes (base64Byte), not a value's (credentialByte).
	base64 bool
	// need is how long a run must be, counted from where the search starts, to be found.
	// ended: found where it ends (before a byte that breaks it, or at the end of the text),
	// not at its need-th byte.
	need  int
	ended bool
}

// search is where a search of one class stopped in one text: s[from:read] was read, the run
// in progress at read starts at run, and what it found is at at (the run's start at
// atRun), or at is -1.
type search struct {
	from, read, run, at, atRun int
	used                       bool
}

// first returns where, reading s from i up to stop, c finds a byte or a run (counted from i),
// or -1. It may return a place at or past stop that an earlier search found: nothing is
// before it. A run found where it ends is found at len(s) when stop is len(s) and s ends it.
func (c *class) first(m *search, s string, i, stop int) int {
	resume := m.used && m.from <= i && (m.at >= 0 && i <= m.atRun || m.at < 0 && i <= m.read)
	if !resume {
		*m = search{from: i, read: i, run: i, at: -1, used: true}
	}
	if m.at >= 0 {
		return m.at
	}
	// Runs now count from i: what is found from here on is found for i, not for from.
	m.from, m.run = i, max(m.run, i)
	if readAround != nil {
		from := m.read
		defer func() { readAround(m.read - from) }()
	}
	if !c.runs {
		if m.read >= stop {
			return -1 // read further already, by a search that reached further
		}
		if k := strings.IndexAny(s[m.read:stop], c.set); k >= 0 {
			m.read += k
			m.at, m.atRun = m.read, m.read
			return m.at
		}
		m.read = stop
		return -1
	}
	for ; m.read < stop; m.read++ {
		switch b := s[m.read]; {
		case b >= utf8.RuneSelf:
			m.at, m.atRun = m.read, m.read
			return m.at
		case c.base64 && base64Byte(b) || !c.base64 && credentialByte(b):
			if !c.ended && m.read+1-m.run >= c.need {
				m.at, m.atRun = m.read, m.run
				return m.at
			}
		default:
			if c.ended && m.read-m.run >= c.need {
				m.at, m.atRun = m.read, m.run
				return m.at
			}
			m.run = m.read + 1
		}
	}
	if c.ended && m.read == len(s) && m.read-m.run >= c.need {
		m.at, m.atRun = m.read, m.run
		return m.at
	}
	return -1
}

// The classes the look-aheads read. Past ASCII, a byte is found by a run of a value's
// bytes: (?i) may fold it to a letter of the value, and the regexp judges.
var (
	assignClass = class{set: ":="}
	digitClass  = class{set: "0123456789"}
	valueClass  = class{runs: true, need: 16, ended: true}
	base64Class = class{runs: true, base64: true, need: 40}
	// valueEndClass ends the value symbolAhead reads: a blank, a quote, a comma, a
	// semicolon or a carriage return.
	valueEndClass = class{set: " \t\n\"'`,;\r"}
	// symbolClass: the bytes symbolByte takes.
	symbolClass = class{set: "!\"#$%&'()*,:;<>?@[\\]^`{|}"}
)

// before reports whether c finds something in s[i:stop] (see first).
func (c *class) before(m *search, s string, i, stop int) bool {
	at := c.first(m, s, i, stop)
	return at >= 0 && (at < stop || c.ended && at == len(s) && stop == len(s))
}
