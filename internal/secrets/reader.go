package secrets

import (
	"errors"
	"io"

	"github.com/cairn-dev/cairn/internal/strictjson"
)

// pieceOverlap is how much of a piece ScanReader reads again at the head of the next: twice
// the widest window a rule reads past its keyword (64 KiB, a JWT's), so a match, and what its
// checks read before and after it, lies whole in one piece.
const pieceOverlap = 128 << 10

// ScanReader reports a secret in the text r reads, scanned as ScanJSON scans text that is not
// JSON (a finding's path is "$"), in pieces of 1 MiB that overlap by pieceOverlap: a file of
// any size is scanned in bounded memory. A cut may make a secret the whole text does not
// hold (a token glued to more text, cut after its body), so it errs toward finding one. A
// piece that starts inside a string reads it as one, as a scan of the whole text would.
func ScanReader(r io.Reader) (*Finding, error) {
	buf := make([]byte, strictjson.MaxSize)
	n, in := 0, false
	for {
		k, err := io.ReadFull(r, buf[n:])
		n += k
		if f := scanText(buf[:n], in); f != nil {
			return f, nil
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		keep, escaped := pieceOverlap, false
		if in, escaped = quoted(buf[:n-keep], in); escaped {
			keep++ // the next piece starts with the escape
		}
		n = copy(buf, buf[n-keep:n])
	}
}
