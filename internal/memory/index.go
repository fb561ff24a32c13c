package memory

import (
	"bytes"
	"iter"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// MEMORY.md limits: Claude Code loads its first 200 lines and then its first 25,000 UTF-16
// units (claudeLoads). An index line of ours must end inside both, counted as Claude Code
// counts (a byte count is three times too strict for CJK text), with room for the model to
// add lines above it between two of our writes.
const (
	IndexFile      = "MEMORY.md"
	maxIndexLine   = 190    // 0-based line index our line must sit below
	maxIndexOffset = 24_000 // offset in UTF-16 units our line must end before
)

const bom = "\ufeff"

// What Claude Code loads of MEMORY.md exactly (claudeLoads), as against the room SetEntry keeps.
const (
	loadedLineCap  = 200
	loadedUnitsCap = 25_000 // UTF-16 units: Claude Code cuts a JavaScript string
)

// claudeTrims reports whether JavaScript's trim() takes r off a string's ends.
func claudeTrims(r rune) bool { return r == '\ufeff' || r != 0x85 && unicode.IsSpace(r) }

// claudeLoads yields the lines of MEMORY.md that Claude Code (2.1.330) loads whole, in order:
// it trims the content (a byte-order mark and blank lines with it), keeps its first 200 lines,
// and cuts those at the last line end within 25,000 UTF-16 units.
func claudeLoads(content []byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		s := strings.TrimFunc(string(content), claudeTrims)
		if s == "" {
			return // no line at all, not one empty line
		}
		n, units := 0, 0
		for l := range strings.SplitSeq(s, "\n") {
			units += textsafe.Units(l)
			if n == loadedLineCap || units > loadedUnitsCap || !yield(l) {
				return
			}
			n, units = n+1, units+1
		}
	}
}

// othersLoaded is how many lines not of target's entry Claude Code loads of content.
func othersLoaded(content []byte, target string) int {
	n := 0
	for range claudeLoads(content) {
		n++
	}
	// claudeLoads trims the blank lines the file begins with: its line i is the file's i+skip.
	s := string(content)
	skip := strings.Count(s[:len(s)-len(strings.TrimLeftFunc(s, claudeTrims))], "\n")
	others, i := n, 0
	for l := range lines(content) {
		if i >= skip+n {
			break
		}
		if i >= skip && l.owns(target) {
			others--
		}
		i++
	}
	return others
}

// line is one line of a file and its own terminator: "\n" or "\r\n" ("\r" too in textLines), or
// "" for a last line without one. Joining text+eol over all lines gives back the exact bytes.
type line struct {
	text string
	eol  string
	// code says the line is a code fence, inside a fenced or indented code block, or inside an
	// HTML comment (lines only, see codeText): an example of an index line there is text,
	// never an entry.
	code bool
}

// target is the link target of the index entry l is, "" when it is none.
func (l line) target() string {
	if l.code {
		return ""
	}
	return entryTarget(l.text)
}

// owns reports whether l is the index entry for target.
func (l line) owns(target string) bool { return !l.code && owns(l.text, target) }

func splitLines(b []byte) []line { return slices.Collect(lines(b)) }

// lines yields MEMORY.md's lines one at a time as Claude Code reads them (2.1.330 splits it
// on "\n"), so a search can stop at the first match without splitting a long index. A line ends
// at "\n", with the "\r" before it when there is one; a carriage return anywhere else is part of
// its line, which Cairn never takes apart. Lines of code blocks and comments are marked code.
func lines(b []byte) iter.Seq[line] {
	return func(yield func(line) bool) {
		var f codeText
		off := 0
		for l := range scanLines(b, "\n") {
			off += len(l.text) + len(l.eol)
			l.code = f.step(l.text, b[off:])
			if !yield(l) {
				return
			}
		}
	}
}

// codeText follows what of a file's lines is code or comment, where an example of an index
// line is no entry: fenced code blocks (fence), indented code blocks and HTML comments, as
// CommonMark has them, and as loose as a hand-edited file needs: a comment nothing closes is
// text, as an unclosed fence is, so that one left open hides no line of Cairn's below it.
type codeText struct {
	fence     fence
	comment   bool // inside an HTML comment
	noClose   bool // no "-->" below an opener met: none below a later one either
	indented  bool // inside an indented code block
	afterText bool // the line before was not blank: an indented line continues it, is no code
	list      bool // inside a list, where an indented line is the item's, not code
}

// step takes the next line and what follows it in the file, and reports whether the line is
// code or comment.
func (c *codeText) step(text string, below []byte) bool {
	if c.fence.mark != 0 {
		return c.fence.step(text, below)
	}
	if c.comment {
		if j := strings.Index(text, "-->"); j >= 0 {
			c.comment = c.opens(text[j+3:], below)
		}
		c.afterText = true
		return true
	}
	t := strings.TrimPrefix(text, bom)
	if strings.TrimLeft(t, " \t\r") == "" {
		c.afterText = false
		return c.indented
	}
	wasText := c.afterText
	c.afterText = true
	col := indentCols(t)
	if col >= 4 && (c.indented || !wasText && !c.list) {
		c.indented = true
		return true
	}
	c.indented = false
	switch {
	case startsListItem(t):
		c.list = true
	case col < 2 && (!wasText || strings.HasPrefix(t, "#")):
		c.list = false // a paragraph or heading at the margin ends the list
	}
	if c.fence.step(text, below) {
		return true
	}
	c.comment = c.opens(t, below)
	return false
}

// opens reports whether text, outside any comment, leaves one open that a line below closes.
// An opener escaped ("\\<!--", as Cairn's own lines carry one) or inside a code span (after an
// odd number of backticks) is text.
func (c *codeText) opens(text string, below []byte) bool {
	in := false
	for i := 0; i < len(text); {
		if in {
			j := strings.Index(text[i:], "-->")
			if j < 0 {
				break
			}
			i, in = i+j+3, false
			continue
		}
		j := strings.Index(text[i:], "<!--")
		if j < 0 {
			break
		}
		j += i
		in = (j == 0 || text[j-1] != '\\') && strings.Count(text[:j], "`")%2 == 0
		i = j + 4
	}
	if !in || c.noClose {
		return false
	}
	if !bytes.Contains(below, []byte("-->")) {
		c.noClose = true
		return false
	}
	return true
}

// indentCols is the column text's first non-blank character is at, a tab going to the next
// multiple of four.
func indentCols(text string) int {
	col := 0
	for _, r := range text {
		switch r {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}

// startsListItem reports whether text begins a list item: at most three spaces, then "-", "*", "+"
// or one to nine digits and "." or ")", then a blank or the line's end.
func startsListItem(text string) bool {
	t := strings.TrimLeft(text, " ")
	if len(text)-len(t) > 3 || t == "" {
		return false
	}
	n := 0
	if t[0] == '-' || t[0] == '*' || t[0] == '+' {
		n = 1
	} else {
		for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n == 0 || n == len(t) || t[n] != '.' && t[n] != ')' {
			return false
		}
		n++
	}
	return n == len(t) || t[n] == ' ' || t[n] == '\t' || t[n] == '\r'
}

// fence follows CommonMark's fenced code blocks through a file's lines. A fence is three or
// more backticks or tildes after at most three spaces (backticks with none in what follows);
// its block ends at a fence of its character at least as long with nothing after it but
// blanks. An opening fence that nothing closes is taken for text, not a block to the file's
// end: a fence left open by a hand edit would otherwise turn every line below it, Cairn's
// among them, into code.
type fence struct {
	mark byte // '`' or '~' while a block is open, else 0
	n    int  // the length of its opening fence
	// unclosed, for '`' and '~', is the shortest opening fence found with no close below it
	// (0: none found): no later one as long has one either, so the file is read once.
	unclosed [2]int
}

// fenceOf takes a line apart as a fence: its character and length and what follows, or
// mark 0 when the line is no fence.
func fenceOf(text string) (mark byte, n int, rest string) {
	t := strings.TrimPrefix(text, bom)
	indent := len(t) - len(strings.TrimLeft(t, " "))
	if indent > 3 {
		return 0, 0, ""
	}
	t = t[indent:]
	for n < len(t) && (t[n] == '`' || t[n] == '~') && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return 0, 0, ""
	}
	return t[0], n, t[n:]
}

// closes reports whether text, a line, closes a block opened by a fence of mark and n.
func closes(text string, mark byte, n int) bool {
	m, k, rest := fenceOf(text)
	return m == mark && k >= n && strings.TrimRight(rest, " \t\r") == ""
}

// step takes the next line and what follows it in the file, and reports whether the line is
// a fence or inside a fenced block.
func (f *fence) step(text string, below []byte) bool {
	if f.mark != 0 {
		if closes(text, f.mark, f.n) {
			f.mark = 0
		}
		return true
	}
	mark, n, rest := fenceOf(text)
	if mark == 0 || mark == '`' && strings.Contains(rest, "`") {
		return false
	}
	k := 0
	if mark == '~' {
		k = 1
	}
	if f.unclosed[k] != 0 && n >= f.unclosed[k] {
		return false
	}
	for l := range scanLines(below, "\n") {
		if closes(l.text, mark, n) {
			f.mark, f.n = mark, n
			return true
		}
	}
	f.unclosed[k] = n
	return false
}

// textLines splits text that is no memory file Claude Code loads (tool input, the topic file's
// lines), where a carriage return alone ends a line too.
func textLines(b []byte) []line { return slices.Collect(scanLines(b, "\r\n")) }

// scanLines yields b's lines, each ending at the first byte of breaks, "\r\n" taken as one
// terminator.
func scanLines(b []byte, breaks string) iter.Seq[line] {
	return func(yield func(line) bool) {
		s := string(b)
		for len(s) > 0 {
			i := strings.IndexAny(s, breaks)
			if i < 0 {
				yield(line{text: s})
				return
			}
			start, end := i, i+1
			switch {
			case s[i] == '\r' && end < len(s) && s[end] == '\n':
				end++
			case s[i] == '\n' && i > 0 && s[i-1] == '\r':
				start--
			}
			if !yield(line{text: s[:start], eol: s[start:end]}) {
				return
			}
			s = s[end:]
		}
	}
}

func joinLines(ls []line) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l.text)
		b.WriteString(l.eol)
	}
	return b.Bytes()
}

// dominantEOL is the file's first line terminator, "\n" when it has none.
func dominantEOL(ls []line) string {
	for _, l := range ls {
		if l.eol != "" {
			return l.eol
		}
	}
	return "\n"
}

// indexLink matches an index entry: an optional list marker, then a Markdown link first on
// the line; group 1 is the link target. Hand edits vary the marker, the title, the spacing,
// angle brackets and a link title, so only the target identifies the entry.
var indexLink = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[ \t]*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?\[(?:[^\]\\]|\\.)*\][ \t]*\([ \t]*<?([^()<>\s]+)>?(?:[ \t]+(?:"[^"]*"|'[^']*'))?[ \t]*\)`)
})

// entryTarget returns the link target of an index entry line, "" when the line is not one.
func entryTarget(text string) string {
	m := indexLink().FindStringSubmatch(strings.TrimPrefix(text, bom))
	if m == nil {
		return ""
	}
	return strings.TrimPrefix(m[1], "./")
}

// afterLink returns what follows the link of an index entry line (its hook, after a
// separator), "" when the line is not one.
func afterLink(text string) string {
	text = strings.TrimPrefix(text, bom)
	loc := indexLink().FindStringIndex(text)
	if loc == nil {
		return ""
	}
	return text[loc[1]:]
}

// owns reports whether an index line is the entry for target (a file name in the memory dir).
func owns(text, target string) bool {
	// Cheap test first: most lines of a long index are someone else's.
	if !strings.Contains(text, "](") || !containsName(text, target) {
		return false
	}
	t := entryTarget(text)
	return t != "" && sameName(t, target)
}

// IndexLine renders an index entry: "- [title](target) — hook". title and hook must already
// be safe one-line text.
func IndexLine(title, target, hook string) string {
	if hook == "" {
		return "- [" + title + "](" + target + ")"
	}
	return "- [" + title + "](" + target + ") — " + hook
}

// SetEntry returns content with exactly one index entry for target, reading entry. An
// existing entry (the first, if a hand edit left several) is rewritten in place and any
// duplicates are removed; an entry missing, or sitting too deep for Claude Code to load it, is
// appended at the end when that is within the loaded part, else put near the top (after a
// first line that is a heading or carries a byte-order mark). Every byte of every other line
// is kept. A line of ours that is the file's last and has no terminator owns the terminator
// before it, so a file without a final newline keeps that shape.
func SetEntry(content []byte, target, entry string) []byte {
	ls := splitLines(content)
	eol := dominantEOL(ls)
	keep := -1
	var prefix string // a byte-order mark our kept line carried
	for i := 0; i < len(ls); i++ {
		if !ls[i].owns(target) {
			continue
		}
		if keep < 0 {
			keep = i
			if strings.HasPrefix(ls[i].text, bom) {
				prefix = bom
			}
			continue
		}
		ls = removeLine(ls, i)
		i--
	}
	if keep >= 0 && fits(ls, keep, textsafe.Units(prefix+entry)) {
		ls[keep].text = prefix + entry
		return joinLines(ls)
	}
	if keep >= 0 {
		// Too deep to be loaded. It is not line 0 (that always fits), so it has no mark.
		ls = removeLine(ls, keep)
	}
	return joinLines(insertEntry(ls, entry, eol))
}

// RemoveEntry returns content without any index entry for target, every other byte kept.
func RemoveEntry(content []byte, target string) []byte {
	ls := splitLines(content)
	for i := 0; i < len(ls); i++ {
		if ls[i].owns(target) {
			if strings.HasPrefix(ls[i].text, bom) {
				n := len(ls)
				ls[i] = line{text: bom}
				if ls = mergeBOM(ls); len(ls) < n {
					i-- // the next line moved up into place i
				}
				continue
			}
			ls = removeLine(ls, i)
			i--
		}
	}
	return joinLines(ls)
}

// FindEntry returns the text of the first index entry for target and whether there is one.
func FindEntry(content []byte, target string) (string, bool) {
	for l := range lines(content) {
		if l.owns(target) {
			return strings.TrimPrefix(l.text, bom), true
		}
	}
	return "", false
}

// entryIs reports whether the first index entry for target in content is line, an entry for
// target as IndexLine writes it, where Claude Code loads it (see loaded): further down it is
// as good as missing. A line equal to it counts as it stands, so the common case (Cairn's own
// line, unchanged) compiles and runs no regexp: about a tenth of what a Stop hook does itself.
func entryIs(content []byte, target, line string) bool {
	i, off := 0, 0
	for l := range lines(content) {
		if !l.code && strings.TrimPrefix(l.text, bom) == line {
			return loaded(i, off+textsafe.Units(l.text))
		}
		if l.owns(target) {
			return false
		}
		i, off = i+1, off+textsafe.Units(l.text)+len(l.eol)
	}
	return false
}

// loadedEntry is the first index entry for target in content, "" when there is none where
// Claude Code loads it (see loaded).
func loadedEntry(content []byte, target string) string {
	i, off := 0, 0
	for l := range lines(content) {
		if l.owns(target) {
			if !loaded(i, off+textsafe.Units(l.text)) {
				return ""
			}
			return strings.TrimPrefix(l.text, bom)
		}
		i, off = i+1, off+textsafe.Units(l.text)+len(l.eol)
	}
	return ""
}

// mergeBOM folds a first line that is only a byte-order mark with no terminator into the
// line after it.
func mergeBOM(ls []line) []line {
	if len(ls) >= 2 && ls[0].text == bom && ls[0].eol == "" {
		ls[1].text = bom + ls[1].text
		return ls[1:]
	}
	return ls
}

// removeLine drops line i with its terminator; a last line without one takes the terminator
// before it instead, which it owned.
func removeLine(ls []line, i int) []line {
	if i == len(ls)-1 && ls[i].eol == "" && i > 0 {
		ls[i-1].eol = ""
	}
	return append(ls[:i], ls[i+1:]...)
}

// insertLine puts l at index i. Appended after a last line without a terminator, it takes
// that line's place as the unterminated one and the terminator goes between them: "\r\n" after
// a carriage return that line ends in, which "\n" would make part of the terminator, and
// removing our line again would take.
func insertLine(ls []line, i int, l line, eol string) []line {
	if i == len(ls) && i > 0 && ls[i-1].eol == "" {
		ls[i-1].eol = eol
		if strings.HasSuffix(ls[i-1].text, "\r") {
			ls[i-1].eol = "\r\n"
		}
		l.eol = ""
	}
	return slices.Insert(ls, i, l)
}

// fits reports whether a line of n UTF-16 units at index i would be loaded by Claude Code.
func fits(ls []line, i, n int) bool {
	if i >= maxIndexLine {
		return false
	}
	off := 0
	for _, l := range ls[:i] {
		off += textsafe.Units(l.text) + len(l.eol)
	}
	return loaded(i, off+n)
}

// loaded reports whether a line at index i that ends at offset end (UTF-16 units) is in what
// Claude Code loads of MEMORY.md, with the room SetEntry keeps.
func loaded(i, end int) bool { return i < maxIndexLine && end < maxIndexOffset }

func insertEntry(ls []line, entry, eol string) []line {
	at := len(ls)
	if at > 0 && !fits(ls, at, textsafe.Units(entry)+len(eol)) {
		at = 0
		if first := ls[0].text; strings.HasPrefix(first, bom) || strings.HasPrefix(strings.TrimLeft(first, " "), "#") {
			at = 1
		}
	}
	return insertLine(ls, at, line{text: entry, eol: eol}, eol)
}

// containsName reports whether s contains sub, a name, as sameName compares them (targets
// are ASCII names).
func containsName(s, sub string) bool {
	if !foldNames {
		return strings.Contains(s, sub)
	}
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return true
		}
	}
	return false
}
