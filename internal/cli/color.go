package cli

// Colour: only on a terminal, never with NO_COLOR set (https://no-color.org), never on a
// dumb terminal; CLICOLOR_FORCE=1 turns it on where the output is not a terminal (a pager,
// a test), and NO_COLOR still wins. Every colour marks something the words already say, so
// nothing is lost without it.

// sgr is an ANSI Select Graphic Rendition code.
type sgr string

const (
	bold   sgr = "1"
	dim    sgr = "2"
	red    sgr = "31"
	green  sgr = "32"
	yellow sgr = "33"
	cyan   sgr = "36"
)

// colorOn decides colour for one stream.
func colorOn(stream any, getenv func(string) string) bool {
	// NO_COLOR counts when set to anything but the empty string, as the convention says.
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	return isTerminal(stream)
}

// style and styleErr wrap s in a colour for stdout and stderr, when that stream has colour.
func (a *app) style(c sgr, s string) string    { return paint(a.color, c, s) }
func (a *app) styleErr(c sgr, s string) string { return paint(a.colorErr, c, s) }

func paint(on bool, c sgr, s string) string {
	if !on || s == "" {
		return s
	}
	return "\x1b[" + string(c) + "m" + s + "\x1b[0m"
}
