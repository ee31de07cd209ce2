package ncu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// NVTXColumn is the raw and details pages' push/pop stack column.
const NVTXColumn = "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"

// StartStopColumn is the start/end range column.
const StartStopColumn = "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"

// ParseStack reads one cell of the NVTX stack column, for example
//
//	437  "<default domain>:decode_all:none:none:none:none:none:none"  "<default domain>:decode_step:none:…"
//
// a thread id, then one quoted entry per level, bottom first, each read by
// ParseStackEntry (names keep their ':' '@' '/' quotes and spaces). An
// empty cell is an empty stack.
func ParseStack(cell string) (*model.Stack, error) {
	st := &model.Stack{Raw: cell}
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
		r, err := ParseStackEntry(entry)
		if err != nil {
			return nil, fmt.Errorf("NVTX stack %q: %v", cell, err)
		}
		st.Levels = append(st.Levels, r)
	}
	return st, nil
}
