package timeline

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
)

// numberDevices gives the GPUs of procs one numbering, rewriting each
// process's kernel and copy devices, when the ordinals the processes saw do
// not tell the GPUs apart: processes of several machines (nodes), or two
// processes whose same ordinal is two GPUs (each rank sees only its own GPU,
// as "device 0", where the launcher sets CUDA_VISIBLE_DEVICES per rank).
// The GPUs are told apart by the UUIDs the library noted (a device of
// unknown UUID by its machine and ordinal) and numbered by the lowest rank
// that used each, then the ordinal: a tensor-parallel run's device R is
// rank R's GPU. Otherwise (one machine, or records that name none, and no
// ordinal that is two GPUs) the ordinals stay and it returns nil.
func numberDevices(procs []*building) []GPU {
	type use struct {
		bp      *building
		ordinal uint32
		key     string
	}
	var uses []use
	machines := map[string]bool{}
	byOrdinal := map[uint32]string{} // ordinal -> the UUID first seen on it
	collide := false
	for _, bp := range procs {
		uuids := map[uint32]string{}
		for _, n := range bp.p.Notes {
			if d, u, ok := cupti.DeviceUUID(n); ok {
				uuids[d] = u
			}
		}
		machine := bp.p.Header.Machine()
		machines[machine] = true
		for _, d := range bp.devices() {
			key := uuids[d]
			if key == "" {
				key = fmt.Sprintf("%s ordinal %d", machine, d)
			} else if prev, ok := byOrdinal[d]; ok && prev != key {
				collide = true
			} else if !ok {
				byOrdinal[d] = key
			}
			uses = append(uses, use{bp, d, key})
		}
	}
	if !collide && len(machines) < 2 {
		return nil
	}
	type gpu struct {
		GPU
		rank    int
		ordinal uint32
	}
	byKey := map[string]*gpu{}
	for _, u := range uses {
		g := byKey[u.key]
		if g == nil {
			g = &gpu{GPU: GPU{Machine: u.bp.p.Header.Machine()}, rank: math.MaxInt, ordinal: u.ordinal}
			if len(u.key) > 4 && u.key[:4] == "GPU-" {
				g.UUID = u.key
			}
			byKey[u.key] = g
		}
		if r, ok := u.bp.p.Header.Rank(); ok {
			g.rank = min(g.rank, r)
			if !slices.Contains(g.Ranks, r) {
				g.Ranks = append(g.Ranks, r)
			}
		}
		g.ordinal = min(g.ordinal, u.ordinal)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, y := byKey[a], byKey[b]
		return cmp.Or(cmp.Compare(x.rank, y.rank), cmp.Compare(x.ordinal, y.ordinal), cmp.Compare(a, b))
	})
	out := make([]GPU, len(keys))
	for i, k := range keys {
		g := byKey[k]
		g.Device = uint32(i)
		slices.Sort(g.Ranks)
		out[i] = g.GPU
	}
	remap := map[*building]map[uint32]uint32{}
	for _, u := range uses {
		if remap[u.bp] == nil {
			remap[u.bp] = map[uint32]uint32{}
		}
		remap[u.bp][u.ordinal] = byKey[u.key].Device
	}
	for bp, m := range remap {
		bp.renumber(m)
	}
	return out
}

// devices are the ordinals of the process's kernels and copies, sorted.
func (bp *building) devices() []uint32 {
	var out []uint32
	for _, f := range bp.p.Functions {
		if !slices.Contains(out, f.Device) {
			out = append(out, f.Device)
		}
	}
	for _, c := range bp.p.Copies {
		if !slices.Contains(out, c.Device) {
			out = append(out, c.Device)
		}
	}
	slices.Sort(out)
	return out
}

// renumber rewrites the process's devices by m.
func (bp *building) renumber(m map[uint32]uint32) {
	for _, f := range bp.p.Functions {
		f.Device = m[f.Device]
	}
	for i := range bp.p.Copies {
		bp.p.Copies[i].Device = m[bp.p.Copies[i].Device]
	}
}

// FileMachine is the machine (cupti.Header.Machine) of the record file at
// path: "" for a file written before the library recorded it.
func FileMachine(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	in, err := OpenRecords(f, path)
	if err != nil {
		return "", err
	}
	r := cupti.NewReader(in, path)
	if !r.Scan() {
		if err := r.Err(); err != nil {
			return "", err
		}
		return "", nil // empty: the process wrote nothing
	}
	switch rec := r.Record().(type) {
	case *cupti.Header:
		return rec.Machine(), nil
	case *cupti.SyntaxError:
		return "", rec
	}
	return "", nil
}
