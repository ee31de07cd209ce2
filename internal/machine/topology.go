package machine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Link is how two used GPUs are connected, as nvidia-smi topo -m shows it.
type Link struct {
	// GPUs are the NVML indices of the two GPUs, the lower first.
	GPUs [2]int `json:"gpus"`
	// Topo is nvidia-smi topo -m's spelling of the connection: "NV18" for
	// 18 NVLinks, else the PCIe path from CommonAncestor: "PIX", "PXB",
	// "PHB", "NODE", "SYS", or "SELF" for GPUs on one board; "" when
	// neither is known.
	Topo string `json:"topo"`
	// CommonAncestor is NVML's closest common ancestor of the two on the
	// PCIe tree: "internal" (one board), "single_switch",
	// "multiple_switches", "host_bridge", "numa_node" (host bridges of one
	// NUMA node) or "system" (across NUMA nodes, over the CPU
	// interconnect).
	CommonAncestor string `json:"common_ancestor"`
	// NVLinks counts the first GPU's active NVLinks that reach the second:
	// straight to its PCI bus, or to an NVSwitch when the second GPU has an
	// active link to one too. 0 when none or when NVLink is unsupported.
	NVLinks int `json:"nvlinks"`
	// P2PNVLink and P2PRead are NVML's peer-to-peer status from the first
	// GPU to the second, over NVLink and for reads: "ok", "not supported",
	// "chipset not supported", "GPU not supported", "IOH topology not
	// supported", "disabled by regkey" or "unknown"; "" when NVML does not
	// support the query.
	P2PNVLink string `json:"p2p_nvlink"`
	P2PRead   string `json:"p2p_read"`
	// Line is the pair for people: "GPU 0 – GPU 1: 18 NVLinks (NV18)".
	Line string `json:"line"`
}

// ancestors are NVML's topology levels: the name in env.json, nvidia-smi's
// spelling and what it means for Link.Line.
var ancestors = map[nvml.GpuTopologyLevel]struct{ name, smi, says string }{
	nvml.TOPOLOGY_INTERNAL:   {"internal", "SELF", "one board"},
	nvml.TOPOLOGY_SINGLE:     {"single_switch", "PIX", "PCIe through one switch"},
	nvml.TOPOLOGY_MULTIPLE:   {"multiple_switches", "PXB", "PCIe through several switches"},
	nvml.TOPOLOGY_HOSTBRIDGE: {"host_bridge", "PHB", "PCIe through a host bridge"},
	nvml.TOPOLOGY_NODE:       {"numa_node", "NODE", "PCIe across the host bridges of one NUMA node"},
	nvml.TOPOLOGY_SYSTEM:     {"system", "SYS", "PCIe across NUMA nodes"},
}

// p2pStatus spells NVML's P2P statuses.
var p2pStatus = map[nvml.GpuP2PStatus]string{
	nvml.P2P_STATUS_OK:                         "ok",
	nvml.P2P_STATUS_CHIPSET_NOT_SUPPORTED:      "chipset not supported",
	nvml.P2P_STATUS_GPU_NOT_SUPPORTED:          "GPU not supported",
	nvml.P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED: "IOH topology not supported",
	nvml.P2P_STATUS_DISABLED_BY_REGKEY:         "disabled by regkey",
	nvml.P2P_STATUS_NOT_SUPPORTED:              "not supported",
	nvml.P2P_STATUS_UNKNOWN:                    "unknown",
}

// nvlinks is where one GPU's active NVLinks lead.
type nvlinks struct {
	supported bool
	gpus      []string // the remote PCI bus of each active link to a GPU
	switches  int      // active links to an NVSwitch
}

// topology fills Topology: one Link for each pair of distinct used GPUs.
func (c *collector) topology() error {
	c.p.Topology = []Link{}
	var used []int
	for _, g := range c.p.Used {
		if !slices.Contains(used, g.Index) {
			used = append(used, g.Index)
		}
	}
	slices.Sort(used)
	if len(used) < 2 {
		return nil
	}
	links := map[int]nvlinks{}
	for _, i := range used {
		l, err := c.nvlinks(i)
		if err != nil {
			return err
		}
		links[i] = l
	}
	for a, i := range used {
		for _, j := range used[a+1:] {
			l, err := c.link(i, j, links[i], links[j])
			if err != nil {
				return err
			}
			c.p.Topology = append(c.p.Topology, l)
		}
	}
	return nil
}

// nvlinks walks GPU i's NVLinks. ERROR_NOT_SUPPORTED on a link is a link
// the GPU does not have, as is ERROR_INVALID_ARGUMENT after the first (GPUs
// with fewer than NVLINK_MAX_LINKS links); NVLink is supported when some
// link answers.
func (c *collector) nvlinks(i int) (nvlinks, error) {
	dev := c.devs[i]
	var l nvlinks
	for n := range nvml.NVLINK_MAX_LINKS {
		state, ret := dev.GetNvLinkState(n)
		switch {
		case ret == nvml.ERROR_NOT_SUPPORTED, ret == nvml.ERROR_INVALID_ARGUMENT && n > 0:
			continue
		case ret != nvml.SUCCESS:
			return nvlinks{}, callError(ret, "DeviceGetNvLinkState(%d, %d)", i, n)
		}
		l.supported = true
		if state != nvml.FEATURE_ENABLED {
			continue
		}
		kind, ret := dev.GetNvLinkRemoteDeviceType(n)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_SUPPORTED: // older drivers: judge by the PCI bus alone
			kind = nvml.NVLINK_DEVICE_TYPE_GPU
		default:
			return nvlinks{}, callError(ret, "DeviceGetNvLinkRemoteDeviceType(%d, %d)", i, n)
		}
		if kind == nvml.NVLINK_DEVICE_TYPE_SWITCH {
			l.switches++
			continue
		}
		pci, ret := dev.GetNvLinkRemotePciInfo(n)
		if ret != nvml.SUCCESS {
			return nvlinks{}, callError(ret, "DeviceGetNvLinkRemotePciInfo(%d, %d)", i, n)
		}
		l.gpus = append(l.gpus, busID(cString(pci.BusId[:])))
	}
	return l, nil
}

// link reads how GPUs i and j (i < j) are linked, given where their
// NVLinks lead.
func (c *collector) link(i, j int, li, lj nvlinks) (Link, error) {
	l := Link{GPUs: [2]int{i, j}}
	field := func(name string) string { return fmt.Sprintf("topology[%d].%s", len(c.p.Topology), name) }
	a, b := c.devs[i], c.devs[j]

	level, ret := a.GetTopologyCommonAncestor(b)
	ok, err := c.optional(ret, field("common_ancestor"), "DeviceGetTopologyCommonAncestor(%d, %d)", i, j)
	if err != nil {
		return Link{}, err
	}
	anc, known := ancestors[level]
	if ok && !known {
		return Link{}, fmt.Errorf("nvml: DeviceGetTopologyCommonAncestor(%d, %d): unknown level %d", i, j, level)
	}
	if ok {
		l.CommonAncestor, l.Topo = anc.name, anc.smi
	}

	if !li.supported || !lj.supported {
		c.p.Unsupported = append(c.p.Unsupported, field("nvlinks"))
	} else {
		bus := busID(c.p.GPUs[j].PCIBusID)
		for _, remote := range li.gpus {
			if remote == bus {
				l.NVLinks++
			}
		}
		if lj.switches > 0 {
			l.NVLinks += li.switches
		}
		if l.NVLinks > 0 {
			l.Topo = fmt.Sprintf("NV%d", l.NVLinks)
		}
	}

	for _, p := range []struct {
		dst   *string
		index nvml.GpuP2PCapsIndex
		field string
		call  string
	}{
		{&l.P2PNVLink, nvml.P2P_CAPS_INDEX_NVLINK, "p2p_nvlink", "DeviceGetP2PStatus(%d, %d, P2P_CAPS_INDEX_NVLINK)"},
		{&l.P2PRead, nvml.P2P_CAPS_INDEX_READ, "p2p_read", "DeviceGetP2PStatus(%d, %d, P2P_CAPS_INDEX_READ)"},
	} {
		status, ret := a.GetP2PStatus(b, p.index)
		ok, err := c.optional(ret, field(p.field), p.call, i, j)
		if err != nil {
			return Link{}, err
		}
		if ok {
			if *p.dst = p2pStatus[status]; *p.dst == "" {
				*p.dst = fmt.Sprintf("status %d", status)
			}
		}
	}
	l.Line = line(l, anc.says)
	return l, nil
}

// line says in one line how a pair is linked: "GPU 0 – GPU 1: 18 NVLinks
// (NV18)", "GPU 0 – GPU 2: no NVLink; PCIe across NUMA nodes (SYS)". path
// is what the common ancestor means. A GPU that does not support NVLink
// has none.
func line(l Link, path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "GPU %d – GPU %d: ", l.GPUs[0], l.GPUs[1])
	switch {
	case l.NVLinks > 0:
		fmt.Fprintf(&b, "%d NVLink", l.NVLinks)
		if l.NVLinks > 1 {
			b.WriteString("s")
		}
		fmt.Fprintf(&b, " (%s)", l.Topo)
		if l.P2PNVLink != "" && l.P2PNVLink != "ok" {
			fmt.Fprintf(&b, "; P2P over NVLink: %s", l.P2PNVLink)
		}
	default:
		b.WriteString("no NVLink; ")
		if l.Topo != "" {
			fmt.Fprintf(&b, "%s (%s)", path, l.Topo)
		} else {
			b.WriteString("PCIe path unknown")
		}
	}
	return b.String()
}

// busID normalises a PCI bus id for comparison: NVML writes the domain in 8
// or 4 hex digits, in either case.
func busID(s string) string {
	var dom, bus, dev, fn uint
	if n, _ := fmt.Sscanf(s, "%x:%x:%x.%x", &dom, &bus, &dev, &fn); n == 4 {
		return fmt.Sprintf("%04x:%02x:%02x.%x", dom, bus, dev, fn)
	}
	return strings.ToLower(s)
}
