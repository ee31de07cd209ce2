package ncu

import (
	"fmt"
	"strconv"
	"strings"
)

// NVTXColumn is the raw and details pages' push/pop stack column.
const NVTXColumn = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"

// StartStopColumn is the start/end range column.
const StartStopColumn = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"

// attrFields is the number of ':'-separated attributes after a range's name:
// PL_Type, PL_Value, CLR_Type, Color, Msg_Type, Msg.
const attrFields = 6

// ParseStack reads one cell of the NVTX stack column, for example
//
//	437  "<default domain>:decode_all:none:none:none:none:none:none"  "<default domain>:decode_step:none:…"
//
// a thread id, then one quoted entry per level, bottom first. An entry is
// domain:name:six attributes; the domain is what precedes the first ':' and
// the name is everything between it and the last six fields, so names keep
// their ':' '@' '/' quotes and spaces. An empty cell is an empty stack.
func ParseStack(cell string) (*Stack, error) {
	st := &Stack{Raw: cell}
	s := strings.TrimSpace(cell)
	if s == "" {
		return st, nil
	}
	tid, rest, _ := strings.Cut(s, " ")
	t, err := strconv.ParseInt(tid, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("NVTX stack %q: thread id %q is not a number", cell, tid)
	}
	st.Thread = t
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return st, nil
	}
	if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
		return nil, fmt.Errorf("NVTX stack %q: ranges are not quoted", cell)
	}
	for _, entry := range strings.Split(rest[1:len(rest)-1], `"  "`) {
		r, err := parseRange(entry)
		if err != nil {
			return nil, fmt.Errorf("NVTX stack %q: %v", cell, err)
		}
		st.Levels = append(st.Levels, r)
	}
	return st, nil
}

func parseRange(entry string) (Range, error) {
	domain, rest, ok := strings.Cut(entry, ":")
	if !ok {
		return Range{}, fmt.Errorf("range %q has no domain:name:attributes form", entry)
	}
	end := len(rest)
	for i := 0; i < attrFields; i++ {
		j := strings.LastIndexByte(rest[:end], ':')
		if j < 0 {
			return Range{}, fmt.Errorf("range %q has fewer than %d attributes after its name", entry, attrFields)
		}
		end = j
	}
	if domain == DefaultDomain {
		domain = ""
	}
	return Range{Domain: domain, Name: rest[:end]}, nil
}

// Path is the stack's levels joined by "/", each written as Range.String.
func (s *Stack) Path() string {
	if s == nil {
		return ""
	}
	parts := make([]string, len(s.Levels))
	for i, l := range s.Levels {
		parts[i] = l.String()
	}
	return strings.Join(parts, "/")
}
