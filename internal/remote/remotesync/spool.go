package remotesync

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
)

// spoolMem is how many bytes of records a spool keeps in memory before it writes them to a
// temporary file: a sync's usual few revisions are never written.
var spoolMem = 1 << 20

// spool keeps records (the remote's, as a sync read them) to be read again, in order: in memory
// up to spoolMem bytes, the rest in a temporary file, so that a long line is never held whole.
// Where no temporary file can be made, all are kept in memory, as before there were spools.
type spool struct {
	mem    [][]byte
	size   int
	f      *os.File
	w      *bufio.Writer
	noFile bool
}

// fileErr is err of the spool's file, said with where it was and what to do: a temporary
// directory too small for the line fails the sync that would have held it in memory.
func fileErr(err error) error {
	return fmt.Errorf("keeping the remote's line in a temporary file in %s failed: %w; free space there, or set TMPDIR to a directory with room", os.TempDir(), err)
}

func (s *spool) add(data []byte) error {
	if s.f == nil && !s.noFile && s.size+len(data) > spoolMem {
		f, err := os.CreateTemp("", "cairn-line-")
		s.f, s.noFile = f, err != nil
		if err == nil {
			s.w = bufio.NewWriter(f)
			// Nameless from the start where an open file can be removed: a sync killed while
			// it reads leaves no copy of the line behind. Windows keeps it until close.
			if runtime.GOOS != "windows" {
				os.Remove(f.Name())
			}
		}
	}
	if s.f == nil {
		s.mem, s.size = append(s.mem, data), s.size+len(data)
		return nil
	}
	s.w.Write(binary.AppendUvarint(nil, uint64(len(data))))
	if _, err := s.w.Write(data); err != nil {
		return fileErr(err)
	}
	return nil
}

// each hands fn each record, oldest first; fn's error stops it and is returned.
func (s *spool) each(fn func([]byte) error) error {
	for _, d := range s.mem {
		if err := fn(d); err != nil {
			return err
		}
	}
	if s.f == nil {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return fileErr(err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fileErr(err)
	}
	r := bufio.NewReader(s.f)
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		d := make([]byte, n)
		if err == nil {
			_, err = io.ReadFull(r, d)
		}
		if err == nil {
			err = fn(d)
		}
		if err != nil {
			return err
		}
	}
}

// close removes the spool's file, if it has one.
func (s *spool) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f = nil
	}
}
