package yamldoc_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestStatusDocKeepsTheUsersValues: keys Cairn does not know are written back as their author
// wrote them. Decoded into Go values and encoded again, 1.10 became 1.1, 0644 became 420, a
// date became a timestamp, a long number lost its digits and a comment was dropped.
func TestStatusDocKeepsTheUsersValues(t *testing.T) {
	kept := []string{
		"version: 1.10",
		"mode: 0644",
		"due: 2026-12-01",
		"budget: 123456789012345678901234567890",
		"owner: bob # the PM",
		"flags: {fast: yes, hex: 0x1F}",
		"notes: |\n  first line\n  second line",
	}
	src := "initiative: initiative-20261122T100000Z-0aab\nstatus: in_progress\nprogress: 0\nlastUpdated: 2026-11-22T10:00:00Z\n" +
		strings.Join(kept, "\n") + "\nanchored: &a [x, y]\naliased: *a\n"
	doc, err := yamldoc.Codec{}.ParseStatusDoc([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	in := &workflow.Initiative{ID: "initiative-20261122T100000Z-0aab", Status: workflow.InitiativeInProgress}
	out, err := yamldoc.Codec{}.MarshalStatusDoc(workflow.StatusDocFrom(in, doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kept {
		if !strings.Contains(string(out), "\n"+k+"\n") {
			t.Errorf("%q was not written back as it was:\n%s", k, out)
		}
	}
	// A value that uses an alias is written out in full (its anchor may not be written).
	if !strings.Contains(string(out), "aliased:\n  - x\n  - \"y\"\n") {
		t.Errorf("the aliased value was not written out:\n%s", out)
	}
	again, err := yamldoc.Codec{}.ParseStatusDoc(out)
	if err != nil {
		t.Fatalf("what was written does not read back: %v\n%s", err, out)
	}
	if len(again.Extra) != len(doc.Extra) {
		t.Errorf("read back %d extra keys, want %d", len(again.Extra), len(doc.Extra))
	}
}

// FuzzStatusDoc: whatever the bytes, reading WORKFLOW-STATUS.yaml never panics, and a
// document that reads is written back (with the initiative's own fields) into a file that
// reads again with the same keys of its own.
func FuzzStatusDoc(f *testing.F) {
	f.Add([]byte("initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\nversion: 1.10\nowner: bob # pm\n"))
	f.Add([]byte("initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\na: &x [1, {b: c}]\nb: *x\nc: !!binary aGk=\n"))
	f.Add([]byte("initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\nmilestones:\n  - id: m1\n    status: completed\ncurrentMilestone: m1\n"))
	f.Add([]byte("<<: {x: 1}\ninitiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := yamldoc.Codec{}.ParseStatusDoc(data)
		if err != nil || doc == nil {
			return
		}
		in := &workflow.Initiative{ID: "initiative-20261122T100000Z-0aab", Status: workflow.InitiativeInProgress}
		out, err := yamldoc.Codec{}.MarshalStatusDoc(workflow.StatusDocFrom(in, doc))
		if err != nil {
			t.Fatalf("a document that reads is not written: %v", err)
		}
		again, err := yamldoc.Codec{}.ParseStatusDoc(out)
		if err != nil || again == nil {
			t.Fatalf("what was written does not read back: %v\n%s", err, out)
		}
		if len(again.Extra) != len(doc.Extra) {
			t.Fatalf("read back %d keys of its own, want %d:\n%s", len(again.Extra), len(doc.Extra), out)
		}
	})
}

// A status file of two YAML documents is refused, not read as its first: the next initiative
// change rewrites the file from what was read, and the second document (notes a person kept
// there) would be gone.
func TestStatusDocOfTwoDocumentsIsRefused(t *testing.T) {
	for src, line := range map[string]string{
		"initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n---\nnotes: keep me\n":           "line 4:",
		"---\ninitiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n...\n---\nnotes: keep me\n": "line 6:",
	} {
		doc, err := yamldoc.Codec{}.ParseStatusDoc([]byte(src))
		if err == nil || !strings.Contains(err.Error(), line+" a second YAML document starts here") {
			t.Errorf("%q: %v, %+v; want it refused at %s", src, err, doc, line)
		}
	}
	for _, src := range []string{ // one document, however it is marked
		"---\ninitiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n",
		"---\ninitiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n...\n",
		"initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n...\n# a comment\n",
	} {
		if doc, err := (yamldoc.Codec{}).ParseStatusDoc([]byte(src)); err != nil || doc == nil || doc.Initiative != "x" {
			t.Errorf("%q: %v, %+v", src, err, doc)
		}
	}
}

// Bytes YAML cannot read are reported at their line, with the fix: yaml.v3's own error
// names no line ("invalid leading UTF-8 octet", "control characters are not allowed").
func TestStatusDocLocatesBytesYAMLCannotRead(t *testing.T) {
	for src, want := range map[string]string{
		"initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\nnotes: caf\xe9\n": "reading WORKFLOW-STATUS.yaml: line 3: byte 0xE9 is not valid UTF-8: save the file as UTF-8",
		"initiative: x\n# \x07\n": "reading WORKFLOW-STATUS.yaml: line 2: character U+0007 is not allowed in YAML",
	} {
		if _, err := (yamldoc.Codec{}).ParseStatusDoc([]byte(src)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v; want %q", src, err, want)
		}
	}
}
