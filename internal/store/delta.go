package store

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
)

// A journal delta says how one workflow state (compact JSON) becomes the next, so a journal
// line grows with the change, not with the record. It is generic JSON, computed from the two
// documents' bytes, so the journal knows nothing of the workflow schema. A delta is one of:
//
//	{"v":VALUE}                          replace the value
//	{"o":{KEY:DELTA,...},"d":[KEY,...],"k":[KEY,...]}
//	                                     an object: members changed or added ("o"), deleted
//	                                     ("d"), and the member order ("k") when it is not the
//	                                     old order with new members at the end
//	{"a":[K,[ITEM,...]]}                 an array: drop K items from the front, append these
//	                                     (a bounded history that slides)
//	{"i":{"N":DELTA,...}}                an array of the same length with items N changed
//
// Keys and scalars are kept as their exact bytes, so applying a delta gives the next state
// byte for byte; the writer checks that before it trusts a delta (commitLocked).

// jnode is a JSON value parsed for diffing and patching, keeping exact bytes and member order.
type jnode struct {
	kind byte     // '{', '[' or 0 for a scalar
	lazy bool     // a container whose members are not built yet (see expand)
	src  []byte   // the value's bytes as parsed; nil once a patch changed it
	keys [][]byte // object member names, with their quotes
	vals []*jnode // object member values or array items
}

var errBadJSON = errors.New("malformed JSON in a journal delta or state")

// parseJSON parses one JSON value that has already passed a strict check (a stored state or a
// delta the store wrote). Whitespace between tokens is allowed and dropped.
func parseJSON(b []byte) (*jnode, error) { return new(jparser).parse(b) }

// parseDelta parses a delta with p's slab and stacks, building its own structure only: the
// values it sets stay as their bytes until a later delta reaches into them (expand).
func (p *jparser) parseDelta(b []byte) (*jnode, error) {
	p.expect = 'd'
	n, err := p.parse(b)
	p.expect = 0
	return n, err
}

// parse is parseJSON with p's slab and stacks.
func (p *jparser) parse(b []byte) (*jnode, error) {
	p.b, p.i = b, 0
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, errBadJSON
	}
	return n, nil
}

type jparser struct {
	b     []byte
	i     int
	depth int
	slab  []jnode
	keys  [][]byte // the stacks members are gathered on
	vals  []*jnode
	kslab [][]byte // where members are copied to at their container's end
	vslab []*jnode
	// lazyAt, when above 0, is the depth from which containers are kept as their bytes (lazy)
	// instead of built: parseDelta builds a delta's own structure, not the values it carries.
	lazyAt int
	// expect is what parseDelta expects of the next value: 'd' a delta object, 'm' an object
	// of member or index deltas ("o", "i"), 0 anything (a document's value).
	expect byte
}

// maxDeltaDepth bounds nesting: well above what a stored document may hold (a delta nests two
// levels per level of the document), well below what could exhaust a stack.
const maxDeltaDepth = 1000

func (p *jparser) ws() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\t' || p.b[p.i] == '\r') {
		p.i++
	}
}

// node hands out nodes from a slab, and children are gathered on a shared stack and copied out
// at their container's end to slabs too: a parse allocates a few slabs, not one object per
// value (a replay shares them across its chain).
func (p *jparser) node() *jnode {
	if len(p.slab) == 0 {
		p.slab = make([]jnode, 16)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	return n
}

// members copies the top of the stacks from base and kbase out and pops them. The copies are
// full to capacity, so a patch that appends to them reallocates instead of overwriting a
// neighbour's.
func (p *jparser) members(n *jnode, base, kbase int) {
	v := p.vals[base:]
	if len(p.vslab) < len(v) {
		p.vslab = make([]*jnode, max(64, len(v)))
	}
	n.vals, p.vslab = p.vslab[:len(v):len(v)], p.vslab[len(v):]
	copy(n.vals, v)
	p.vals = p.vals[:base]
	if n.kind != '{' {
		return
	}
	k := p.keys[kbase:]
	if len(p.kslab) < len(k) {
		p.kslab = make([][]byte, max(64, len(k)))
	}
	n.keys, p.kslab = p.kslab[:len(k):len(k)], p.kslab[len(k):]
	copy(n.keys, k)
	p.keys = p.keys[:kbase]
}

func (p *jparser) value() (*jnode, error) {
	p.ws()
	if p.i >= len(p.b) {
		return nil, errBadJSON
	}
	start := p.i
	switch c := p.b[p.i]; c {
	case '{', '[':
		if p.lazyAt > 0 && p.depth+1 >= p.lazyAt {
			if err := p.skip(); err != nil {
				return nil, err
			}
			n := p.node()
			*n = jnode{kind: c, lazy: true, src: p.b[start:p.i]}
			return n, nil
		}
		if p.depth++; p.depth > maxDeltaDepth {
			return nil, errBadJSON
		}
		defer func() { p.depth-- }()
		mode := p.expect
		p.expect = 0
		n := p.node()
		n.kind = c
		p.i++
		p.ws()
		end := c + 2 // '}' or ']'
		if p.i < len(p.b) && p.b[p.i] == end {
			p.i++
			n.src = p.b[start:p.i]
			return n, nil
		}
		base := len(p.vals)
		for {
			if c == '{' {
				p.ws()
				ks := p.i
				if err := p.str(); err != nil {
					return nil, err
				}
				p.keys = append(p.keys, p.b[ks:p.i])
				p.ws()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return nil, errBadJSON
				}
				p.i++
			}
			lazyAt := p.lazyAt
			switch {
			case mode == 'd' && c == '{':
				// A value a delta sets ({"v":VALUE}) or items it appends ({"a":[K,[ITEM,...]]})
				// go into the state as they are: kept as bytes.
				switch string(p.keys[len(p.keys)-1]) {
				case `"v"`:
					p.lazyAt = p.depth + 1
				case `"a"`:
					p.lazyAt = p.depth + 3
				case `"o"`, `"i"`:
					p.expect = 'm'
				}
			case mode == 'm' && c == '{':
				p.expect = 'd'
			}
			v, err := p.value()
			p.lazyAt, p.expect = lazyAt, 0
			if err != nil {
				return nil, err
			}
			p.vals = append(p.vals, v)
			p.ws()
			if p.i >= len(p.b) {
				return nil, errBadJSON
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] != end {
				return nil, errBadJSON
			}
			p.i++
			n.src = p.b[start:p.i]
			kb := len(p.keys)
			if c == '{' {
				kb -= len(p.vals) - base
			}
			p.members(n, base, kb)
			return n, nil
		}
	default:
		if err := p.skip(); err != nil {
			return nil, err
		}
	}
	n := p.node()
	n.src = p.b[start:p.i]
	return n, nil
}

func isDelim(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\n', '\t', '\r':
		return true
	}
	return false
}

// skip moves past one value without building it.
func (p *jparser) skip() error {
	p.ws()
	if p.i >= len(p.b) {
		return errBadJSON
	}
	switch p.b[p.i] {
	case '"':
		return p.str()
	case '{', '[':
		depth := 0
		for ; p.i < len(p.b); p.i++ {
			switch p.b[p.i] {
			case '"':
				if err := p.str(); err != nil {
					return err
				}
				p.i--
			case '{', '[':
				if depth++; depth > maxDeltaDepth {
					return errBadJSON
				}
			case '}', ']':
				if depth--; depth == 0 {
					p.i++
					return nil
				}
			}
		}
		return errBadJSON
	}
	start := p.i
	for p.i < len(p.b) && !isDelim(p.b[p.i]) {
		p.i++
	}
	if p.i == start {
		return errBadJSON
	}
	return nil
}

// lazyJSON is b as a node whose members are built only when a patch needs them.
func lazyJSON(b []byte) (*jnode, error) {
	if len(b) == 0 {
		return nil, errBadJSON
	}
	if b[0] != '{' && b[0] != '[' {
		return parseJSON(b)
	}
	return &jnode{kind: b[0], lazy: true, src: b}, nil
}

// expand builds a lazy node's members (one level).
func (n *jnode) expand() error { return new(jparser).expand(n) }

func (p *jparser) expand(n *jnode) error {
	if n == nil || !n.lazy {
		return nil
	}
	// Its members keep only their bytes (lazy from depth 2) and are expanded in turn when a
	// patch reaches into them, so applying a delta to a large state costs a scan of it plus the
	// parts the delta touches. p's slab and stacks are shared across a replay's deltas.
	lazyAt := p.lazyAt
	p.lazyAt = 2
	t, err := p.parse(n.src)
	p.lazyAt = lazyAt
	if err != nil {
		return err
	}
	n.keys, n.vals, n.lazy = t.keys, t.vals, false
	return nil
}

func (p *jparser) str() error {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return errBadJSON
	}
	p.i++
	body := p.i
	for {
		// To the next quote (a vectorised search), which ends the string unless an odd
		// number of backslashes escapes it.
		q := bytes.IndexByte(p.b[p.i:], '"')
		if q < 0 {
			p.i = len(p.b)
			return errBadJSON
		}
		p.i += q
		bs := 0
		for j := p.i - 1; j >= body && p.b[j] == '\\'; j-- {
			bs++
		}
		p.i++
		if bs%2 == 0 {
			return nil
		}
	}
}

// bytesOf returns n's compact JSON.
func (n *jnode) bytesOf() []byte {
	if n.src != nil {
		return n.src
	}
	return n.appendTo(nil)
}

func (n *jnode) appendTo(b []byte) []byte {
	if n.src != nil {
		return append(b, n.src...)
	}
	b = append(b, n.kind)
	for i, v := range n.vals {
		if i > 0 {
			b = append(b, ',')
		}
		if n.kind == '{' {
			b = append(append(b, n.keys[i]...), ':')
		}
		b = v.appendTo(b)
	}
	return append(b, n.kind+2) // '}' or ']'
}

func (n *jnode) index(key []byte) int {
	for i, k := range n.keys {
		if bytes.Equal(k, key) {
			return i
		}
	}
	return -1
}

func sameNode(a, b *jnode) bool { return bytes.Equal(a.bytesOf(), b.bytesOf()) }

// diffJSON returns the delta that turns a into b, or nil when they are equal.
func diffJSON(a, b *jnode) []byte {
	if sameNode(a, b) {
		return nil
	}
	replace := append(append([]byte(`{"v":`), b.bytesOf()...), '}')
	var d []byte
	switch {
	case a.kind == '{' && b.kind == '{':
		d = diffObject(a, b)
	case a.kind == '[' && b.kind == '[':
		d = diffArray(a, b)
	}
	if d == nil || len(d) >= len(replace) {
		return replace
	}
	return d
}

func diffObject(a, b *jnode) []byte {
	d := []byte(`{"o":{`)
	changed := 0
	var natural [][]byte // a's order without the deleted members, then the new ones
	var del [][]byte
	for _, k := range a.keys {
		if b.index(k) >= 0 {
			natural = append(natural, k)
		} else {
			del = append(del, k)
		}
	}
	for i, k := range b.keys {
		j := a.index(k)
		var md []byte
		if j < 0 {
			natural = append(natural, k)
			md = append(append([]byte(`{"v":`), b.vals[i].bytesOf()...), '}')
		} else {
			md = diffJSON(a.vals[j], b.vals[i])
		}
		if md == nil {
			continue
		}
		if changed > 0 {
			d = append(d, ',')
		}
		changed++
		d = append(append(append(d, k...), ':'), md...)
	}
	d = append(d, '}')
	if len(del) > 0 {
		d = appendKeys(append(d, `,"d":`...), del)
	}
	if !slices.EqualFunc(natural, b.keys, bytes.Equal) {
		d = appendKeys(append(d, `,"k":`...), b.keys)
	}
	return append(d, '}')
}

func appendKeys(d []byte, keys [][]byte) []byte {
	return append(append(append(d, '['), bytes.Join(keys, []byte(","))...), ']')
}

func diffArray(a, b *jnode) []byte {
	n, m := len(a.vals), len(b.vals)
	// Drop k from the front, append the rest: the smallest k whose remainder is b's prefix
	// (dropping all of a is a replace, which the caller weighs).
	for k := 0; k < n || k == 0; k++ {
		if n-k > m || !slices.EqualFunc(a.vals[k:], b.vals[:n-k], sameNode) {
			continue
		}
		d := append([]byte(`{"a":[`), strconv.Itoa(k)...)
		d = append(d, ",["...)
		for i, v := range b.vals[n-k:] {
			if i > 0 {
				d = append(d, ',')
			}
			d = append(d, v.bytesOf()...)
		}
		return append(d, "]]}"...)
	}
	if n != m {
		return nil
	}
	// Only when nothing slid: an array that slid differs at every index.
	d := []byte(`{"i":{`)
	first := true
	for i := range a.vals {
		if md := diffJSON(a.vals[i], b.vals[i]); md != nil {
			if !first {
				d = append(d, ',')
			}
			first = false
			d = append(append(append(append(d, '"'), strconv.Itoa(i)...), `":`...), md...)
		}
	}
	return append(d, "}}"...)
}

// applyDelta changes n as delta says and returns the result (n itself when it is patched in
// place). An error means the delta does not fit n: the journal is damaged.
func applyDelta(n *jnode, delta *jnode) (*jnode, error) { return new(jparser).apply(n, delta) }

// apply is applyDelta expanding lazy nodes with p's slab. delta may be lazy too (lazyJSON):
// only the parts of it that steer the patch are built, and the values it sets stay as their
// bytes until a later delta reaches into them.
func (p *jparser) apply(n *jnode, delta *jnode) (*jnode, error) {
	if delta.kind != '{' || p.expand(delta) != nil || len(delta.keys) == 0 {
		return nil, errBadJSON
	}
	switch string(delta.keys[0]) {
	case `"v"`:
		return delta.vals[0], nil
	case `"o"`:
		o := delta.vals[0]
		if n == nil || n.kind != '{' || p.expand(n) != nil || o.kind != '{' || p.expand(o) != nil {
			return nil, errBadJSON
		}
		n.src = nil
		for i, k := range o.keys {
			j := n.index(k)
			if j < 0 {
				v, err := p.apply(nil, o.vals[i])
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
				continue
			}
			v, err := p.apply(n.vals[j], o.vals[i])
			if err != nil {
				return nil, err
			}
			n.vals[j] = v
		}
		for i := 1; i < len(delta.keys); i++ {
			list := delta.vals[i]
			if list.kind != '[' || p.expand(list) != nil {
				return nil, errBadJSON
			}
			switch string(delta.keys[i]) {
			case `"d"`:
				for _, k := range list.vals {
					if j := n.index(k.src); j >= 0 {
						n.keys = append(n.keys[:j], n.keys[j+1:]...)
						n.vals = append(n.vals[:j], n.vals[j+1:]...)
					}
				}
			case `"k"`:
				if len(list.vals) != len(n.keys) {
					return nil, errBadJSON
				}
				keys, vals := make([][]byte, len(n.keys)), make([]*jnode, len(n.keys))
				for x, k := range list.vals {
					j := n.index(k.src)
					if j < 0 {
						return nil, errBadJSON
					}
					keys[x], vals[x] = n.keys[j], n.vals[j]
				}
				n.keys, n.vals = keys, vals
			}
		}
		return n, nil
	case `"a"`:
		arg := delta.vals[0]
		if n == nil || n.kind != '[' || arg.kind != '[' || p.expand(arg) != nil || len(arg.vals) != 2 || arg.vals[1].kind != '[' || p.expand(arg.vals[1]) != nil || p.expand(n) != nil {
			return nil, errBadJSON
		}
		k, err := strconv.Atoi(string(arg.vals[0].src))
		if err != nil || k < 0 || k > len(n.vals) {
			return nil, errBadJSON
		}
		n.src = nil
		n.vals = append(append([]*jnode(nil), n.vals[k:]...), arg.vals[1].vals...)
		return n, nil
	case `"i"`:
		o := delta.vals[0]
		if n == nil || n.kind != '[' || p.expand(n) != nil || o.kind != '{' || p.expand(o) != nil {
			return nil, errBadJSON
		}
		n.src = nil
		for i, k := range o.keys {
			x, err := strconv.Atoi(string(bytes.Trim(k, `"`)))
			if err != nil || x < 0 || x >= len(n.vals) {
				return nil, errBadJSON
			}
			if n.vals[x], err = p.apply(n.vals[x], o.vals[i]); err != nil {
				return nil, err
			}
		}
		return n, nil
	}
	return nil, errBadJSON
}
