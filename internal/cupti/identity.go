package cupti

import (
	"strconv"
	"strings"
)

// The header keys that say who a process is in a run of several (further
// key=value fields, in Header.Extra): the machine's host name, the node as
// the launcher numbers it (torchrun's GROUP_RANK, or $DEEPPROF_NODE), and
// the process's global and local rank ($RANK, $LOCAL_RANK).
const (
	KeyHost      = "host"
	KeyNode      = "node"
	KeyRank      = "rank"
	KeyLocalRank = "local_rank"
)

// Get is the value of a further header field, "" when the header has none.
func (h Header) Get(key string) string {
	for _, kv := range h.Extra {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// Rank is the process's global rank ($RANK when the library recorded it).
func (h Header) Rank() (int, bool) {
	r, err := strconv.Atoi(h.Get(KeyRank))
	return r, err == nil && r >= 0
}

// Machine names the node a process ran on: its host and the launcher's
// node number, "" for a file that has neither (written before the library
// recorded them).
func (h Header) Machine() string {
	host, node := h.Get(KeyHost), h.Get(KeyNode)
	if node == "" {
		return host
	}
	return host + "/node" + node
}

// deviceNotePrefix starts the key of a note naming a device's GPU:
// "device.<ordinal>" (the ordinal the process sees), its value the GPU's
// UUID as nvidia-smi writes it ("GPU-..."), or "unknown".
const deviceNotePrefix = "device."

// DeviceNote is the note that says device ordinal d of the process is the
// GPU with uuid.
func DeviceNote(d uint32, uuid string) Note {
	return Note{Key: deviceNotePrefix + strconv.FormatUint(uint64(d), 10), Value: uuid}
}

// DeviceUUID reads a note made by DeviceNote: the device ordinal and its
// GPU's UUID, ok false for any other note or a UUID the library could not
// read.
func DeviceUUID(n Note) (d uint32, uuid string, ok bool) {
	rest, found := strings.CutPrefix(n.Key, deviceNotePrefix)
	if !found {
		return 0, "", false
	}
	v, err := strconv.ParseUint(rest, 10, 32)
	if err != nil || !strings.HasPrefix(n.Value, "GPU-") {
		return 0, "", false
	}
	return uint32(v), n.Value, true
}
