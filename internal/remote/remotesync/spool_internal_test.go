package remotesync

import (
	"bytes"
	"os"
	"runtime"
	"testing"
)

// TestSpoolLeavesNoFile: a sync killed while its spool is written (kill -9, a power loss) left
// its temporary file, a copy of the remote's line, in the temporary directory for good. Where
// an open file can be removed (not Windows) it has no name from the start; the records still
// come back whole and in order.
func TestSpoolLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	var s spool
	defer s.close()
	var want [][]byte
	for i := range 5 {
		d := bytes.Repeat([]byte{'a' + byte(i)}, 300<<10)
		want = append(want, d)
		if err := s.add(d); err != nil {
			t.Fatal(err)
		}
	}
	if s.f == nil {
		t.Fatal("1.5 MiB of records were all kept in memory; want the rest in a file")
	}
	if ents, err := os.ReadDir(dir); err != nil {
		t.Fatal(err)
	} else if len(ents) != 0 && runtime.GOOS != "windows" {
		t.Errorf("the spool's file is named in the temporary directory (%s); a crash would leave it", ents[0].Name())
	}
	var got [][]byte
	if err := s.each(func(d []byte) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("the spool gave %d records back; want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("record %d came back changed", i)
		}
	}
}
