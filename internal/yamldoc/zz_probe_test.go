package yamldoc

import (
	"fmt"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	for _, in := range []string{
		"---\r\nname: x\r\nphases: [a, b]\r\n---\r\nbody\r\n",
		"\ufeff---\nphases: [a, b]\n---\n",
		"---\nphases: [a, b]\ndescription: |\n  text\n  ---\n  more\n---\n",
		"---\nphases: [a, b]\ndescription: \"a\n---\nb\"\n---\n",
		"---\nphases: [a, b]\nphases: [c]\n---\n",
		"---\nphases: [a, b]\ntransitions:\n  a: [b]\n  A: [b]\n---\n",
		"---\nphases: [a, B, b]\n---\n",
		"---\nphases: [a, b, c]\ntransitions: {a: [b], b: [a, c]}\n---\n",
		"---\nphases: [a, b, c]\ntransitions: {}\n---\n",
		"---\nphases: [a, b, c]\nterminal: []\n---\n",
		"---\nphases: [a, b, c]\napprovals: [a]\ntransitions: {a: [b, c], b: [a]}\nterminal: [c]\n---\n",
		"---\nname: x\nphases: a\n---\n",
		"---\nphases: [a, b]\nttl: 0s\n---\n",
		"---\nphases: [a, b]\nttl: -1h\n---\n",
		"---\nphases: [a, b]\nttl: 100000000h\n---\n",
		"---\nphases: [a, b]\nttl: 1e9h\n---\n",
		"---\nphases: [a, b]\nblocking: no\n---\n",
		"---\nphases: [a, b]\nblocking: \"false\"\n---\n",
		"---\nname: 123\nphases: [a, b]\n---\n",
		"---\nphases: [a, b]\nverbs: {a: 1}\n---\n",
		"---\nphases: [\"a \", b]\n---\n",
		"---\nphases: [a, b]\nmajor: [a -> b]\n---\n",
		"---\nphases: [a, b]\ndescription: !!binary aGVsbG8=\n---\n",
		"---\nphases: !!set {a, b}\n---\n",
		"---\nphases: [a, b]\n---\n---\nphases: [c]\n---\n",
		"---\nphases: [a, b]\n\t\n---\n",
		"---\nphases:\n\t- a\n---\n",
		"---\nphases: [a, b] # ---\n---\n",
		"--- \nphases: [a, b]\n---\n",
		"---\nphases: [a, b]\n--- \n",
		"---\nphases: [a, b]\n---",
		"---\r\nphases: [a, b]\r\n--- \r\nbody",
	} {
		d, err := Codec{}.ParseDefinition("/x/wf.md", []byte(in))
		if err != nil {
			fmt.Printf("%q\n   ERR %v\n", in, err)
			continue
		}
		fmt.Printf("%q\n   OK name=%s phases=%v tr=%v term=%v gates=%v ttl=%s blocking=%v desc=%q body=%q\n", in, d.Name, d.Phases, d.Transitions, d.Terminal, d.Approvals, d.TTL, d.Blocking, d.Description, strings.TrimSpace(d.Body))
	}
}
