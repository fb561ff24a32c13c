package engine

import (
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/internal/jsonx"
)

// The small documents the hooks read or write at every session start and turn (the session
// record, the L2 ledger, the configuration, the Stop hook's memory) are encoded and decoded
// by hand, with jsonx, rather than by encoding/json, whose reflection is a cold start in every
// hook process. Each gives what encoding/json gave for its type: the same bytes out (field
// order, omitempty, json.Marshal's HTML escaping), the same values in. codec_test.go holds
// them to the encoding/json code they replace, kept there as the oracle.

// encodeSession is json.Marshal(s).
func encodeSession(s Session) ([]byte, error) {
	w := jsonx.NewObjectWriter(make([]byte, 0, 160+len(s.SessionID)), true)
	w.String("session_id", s.SessionID)
	if s.Source != "" {
		w.String("source", s.Source)
	}
	w.Int("pid", int64(s.PID))
	if err := w.Time("started_at", s.StartedAt); err != nil {
		return nil, fmt.Errorf("started_at: %w", err)
	}
	if err := w.Time("heartbeat", s.Heartbeat); err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	return w.Close(), nil
}

// encodeL2State is json.Marshal(s).
func encodeL2State(s l2State) []byte {
	n := 64 + len(s.WorkflowID)
	for _, l := range s.Owed {
		n += len(l) + 8
	}
	w := jsonx.NewObjectWriter(make([]byte, 0, n), true)
	if s.WorkflowID != "" {
		w.String("workflow_id", s.WorkflowID)
	}
	w.Int("revision", s.Revision)
	if len(s.Owed) > 0 {
		w.Strings("owed", s.Owed)
	}
	return w.Close()
}

// encodeStopState is json.Marshal(s).
func encodeStopState(s stopState) []byte {
	w := jsonx.NewObjectWriter(make([]byte, 0, 64+len(s.WorkflowID)+len(s.Fingerprint)+len(s.At)), true)
	w.String("workflow_id", s.WorkflowID)
	w.String("fingerprint", s.Fingerprint)
	w.String("at", s.At)
	return w.Close()
}

// The decoders are lenient as the callers were, which ignored json.Unmarshal's error and used
// whatever it had decoded: a member of the wrong type is passed over (json.Unmarshal goes on
// and reports the first such member at the end), while input that is not JSON at all leaves
// the value zero (json.Unmarshal checks the whole input first). Keys match fields as
// encoding/json matches them (jsonx.MatchField); unknown members are skipped.

var (
	l2StateFields    = []string{"workflow_id", "revision", "owed"}
	fileConfigFields = []string{"archive_retention", "stop_blocking", "approvals"}
	stopStateFields  = []string{"workflow_id", "fingerprint", "at"}
)

// decodeL2State is json.Unmarshal(data, &s) into a zero s.
func decodeL2State(data []byte) (l2State, error) {
	var s l2State
	err := decodeLenient(data, func(l *lenient) error {
		return l.object(l2StateFields, func(name string) error {
			switch name {
			case "workflow_id":
				return l.string(&s.WorkflowID)
			case "revision":
				return l.int64(&s.Revision)
			default: // owed
				return l.strings(&s.Owed)
			}
		})
	})
	if err != nil && !isWrongType(err) {
		return l2State{}, err
	}
	return s, err
}

// decodeConfig is json.Unmarshal(data, &c) into a zero c.
func decodeConfig(data []byte) (fileConfig, error) {
	var c fileConfig
	err := decodeLenient(data, func(l *lenient) error {
		return l.object(fileConfigFields, func(name string) error {
			switch name {
			case "archive_retention":
				return l.intPointer(&c.ArchiveRetention)
			case "approvals":
				return l.boolPointer(&c.Approvals)
			}
			return l.boolPointer(&c.StopBlocking)
		})
	})
	if err != nil && !isWrongType(err) {
		return fileConfig{}, err
	}
	return c, err
}

// decodeStopState is json.Unmarshal(data, &s) into a zero s.
func decodeStopState(data []byte) (stopState, error) {
	var s stopState
	err := decodeLenient(data, func(l *lenient) error {
		return l.object(stopStateFields, func(name string) error {
			switch name {
			case "workflow_id":
				return l.string(&s.WorkflowID)
			case "fingerprint":
				return l.string(&s.Fingerprint)
			default: // at
				return l.string(&s.At)
			}
		})
	})
	if err != nil && !isWrongType(err) {
		return stopState{}, err
	}
	return s, err
}

func isWrongType(err error) bool {
	var je *jsonx.Error
	return errors.As(err, &je) && je.Kind == jsonx.WrongType
}

// lenient reads values as json.Unmarshal stores them. Its methods return an error only when
// the decode must stop (the input is not JSON); a value of the wrong type, which the Reader
// has already passed over, is kept in wrongType and leaves the destination as it was.
type lenient struct {
	r         *jsonx.Reader
	wrongType error // the first value of the wrong type
}

// decodeLenient runs decode over data, which must hold exactly one JSON value, and returns
// the error that stopped it, else the first value of the wrong type, else nil.
func decodeLenient(data []byte, decode func(l *lenient) error) error {
	l := &lenient{r: jsonx.NewReader(data)}
	if err := decode(l); err != nil {
		return err
	}
	if err := l.r.End(); err != nil {
		return err
	}
	return l.wrongType
}

func (l *lenient) check(err error) error {
	if !isWrongType(err) {
		return err
	}
	if l.wrongType == nil {
		l.wrongType = err
	}
	return nil
}

// object reads an object into a struct whose JSON field names are names, calling member for
// each member that matches one. null leaves the struct as it was.
func (l *lenient) object(names []string, member func(name string) error) error {
	if l.r.Null() {
		return nil
	}
	if err := l.r.Object(); err != nil {
		return l.check(err)
	}
	for {
		key, more, err := l.r.Member()
		if err != nil || !more {
			return err
		}
		if name := jsonx.MatchField(key, names); name != "" {
			err = member(name)
		} else {
			_, err = l.r.Raw()
		}
		if err != nil {
			return err
		}
	}
}

// string reads into a string; null leaves it as it was.
func (l *lenient) string(p *string) error {
	if l.r.Null() {
		return nil
	}
	s, err := l.r.String()
	if err != nil {
		return l.check(err)
	}
	*p = s
	return nil
}

// int64 reads into an int64: a fraction, an exponent or overflow is the wrong type; null
// leaves it as it was.
func (l *lenient) int64(p *int64) error {
	if l.r.Null() {
		return nil
	}
	n, err := l.r.Int64()
	if err != nil {
		return l.check(err)
	}
	*p = n
	return nil
}

// intPointer reads into a *int: null sets it to nil; any other value first gives it an int to
// point to (a new zero one when it is nil), which a value of the wrong type then leaves zero.
func (l *lenient) intPointer(p **int) error {
	if l.r.Null() {
		*p = nil
		return nil
	}
	if *p == nil {
		*p = new(int)
	}
	start := l.r.Offset()
	n, err := l.r.Int64()
	if err == nil && int64(int(n)) != n {
		err = &jsonx.Error{Kind: jsonx.WrongType, Offset: start, Reason: fmt.Sprintf("number %d does not fit in an int", n)}
	}
	if err != nil {
		return l.check(err)
	}
	**p = int(n)
	return nil
}

// boolPointer reads into a *bool as intPointer reads into a *int.
func (l *lenient) boolPointer(p **bool) error {
	if l.r.Null() {
		*p = nil
		return nil
	}
	if *p == nil {
		*p = new(bool)
	}
	b, err := l.r.Bool()
	if err != nil {
		return l.check(err)
	}
	**p = b
	return nil
}

// strings reads into a []string as encoding/json does: null sets it to nil; an array is read
// into the backing array already there (for a repeated key, an element that null or a value
// of the wrong type leaves alone keeps the earlier value), growing it as append would, and
// an empty array gives an empty, non-nil slice.
func (l *lenient) strings(p *[]string) error {
	if l.r.Null() {
		*p = nil
		return nil
	}
	if err := l.r.Array(); err != nil {
		return l.check(err)
	}
	v := (*p)[:0]
	for i := 0; ; i++ {
		more, err := l.r.Element()
		if err != nil {
			return err
		}
		if !more {
			break
		}
		if i < cap(v) {
			v = v[:i+1]
		} else {
			v = append(v, "")
		}
		if err := l.string(&v[i]); err != nil {
			return err
		}
	}
	if len(v) == 0 {
		v = []string{}
	}
	*p = v
	return nil
}
