package machine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// ErrNoGPU is wrapped by Collect's error when the machine has no NVIDIA
// driver, no NVML library or no GPU: the error to skip a GPU test on.
var ErrNoGPU = errors.New("no NVIDIA GPU found")

// Provenance is what NVML says about the driver and the GPUs of the machine a
// session ran on; it goes into env.json.
type Provenance struct {
	// Driver is the kernel driver version, "580.159.04".
	Driver string `json:"driver"`
	// CUDADriverVersion is the CUDA version the driver supports, "13.0".
	CUDADriverVersion string `json:"cuda_driver_version"`
	// NVMLVersion is the NVML library version, "13.580.159.04".
	NVMLVersion string `json:"nvml_version"`
	// DeviceCount is the number of GPUs NVML sees (MIG instances not counted).
	DeviceCount int `json:"device_count"`
	// CUDAVisibleDevices is the value the workload runs with; "" when it
	// is unset and the workload may use every GPU.
	CUDAVisibleDevices string `json:"cuda_visible_devices"`
	// Selected is the GPU profiled, the first of Used: for a MIG
	// selection, its parent GPU.
	Selected GPU `json:"selected"`
	// MIGDevice is the MIG instance profiled, when one was selected.
	MIGDevice *MIGDevice `json:"mig_device,omitempty"`
	// Used holds the GPUs the workload may use, in the order its CUDA
	// processes number them (CUDA device 0 first): those
	// CUDAVisibleDevices names, or every GPU when it is "". For a MIG
	// instance, its parent GPU.
	Used []GPU `json:"used"`
	// Topology says how each pair of used GPUs is linked, the pairs by
	// NVML index (0–1, 0–2, 1–2); empty with one used GPU.
	Topology []Link `json:"topology"`
	// GPUs holds every GPU, by index.
	GPUs []GPU `json:"gpus"`
	// Unsupported lists the fields left zero because the GPU does not
	// support them (NVML's ERROR_NOT_SUPPORTED), as JSON paths such as
	// "gpus[0].power_limit_w" or "topology[0].nvlinks"; empty when none.
	Unsupported []string `json:"unsupported"`
}

// GPU is one physical GPU as NVML reports it.
type GPU struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	UUID  string `json:"uuid"`
	// PCIBusID is domain:bus:device.function, "00000000:00:06.0".
	PCIBusID         string `json:"pci_bus_id"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes"`
	// ComputeCapability is "major.minor", "9.0".
	ComputeCapability string `json:"compute_capability"`
	MaxSMClockMHz     uint32 `json:"max_sm_clock_mhz"`
	MaxMemClockMHz    uint32 `json:"max_mem_clock_mhz"`
	// SMClockMHz is the SM clock when Collect ran.
	SMClockMHz uint32 `json:"sm_clock_mhz"`
	// PowerLimitW is the enforced power limit.
	PowerLimitW float64 `json:"power_limit_w"`
	MIG         MIGInfo `json:"mig"`
}

// MIGInfo is a GPU's Multi-Instance GPU state.
type MIGInfo struct {
	// Enabled reports whether MIG mode is on now.
	Enabled bool `json:"enabled"`
	// Pending reports a MIG mode change that waits for a GPU reset.
	Pending bool `json:"pending"`
	// Instances counts the MIG devices present; 0 when MIG is off.
	Instances int `json:"instances"`
}

// MIGDevice is a selected MIG instance.
type MIGDevice struct {
	UUID             string `json:"uuid"`
	Name             string `json:"name"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes"`
}

// Open returns the system's NVML for Collect. It does not load
// libnvidia-ml.so: go-nvml opens the library in Init, so Open succeeds, and
// programs build, on machines without a GPU.
func Open() nvml.Interface { return nvml.New() }

// Collect initializes lib, reads the provenance of every GPU, of the ones
// sel lets the workload use and of the links between those, and shuts lib
// down. Any NVML failure is an error naming the call ("nvml:
// DeviceGetName(0): ERROR_UNKNOWN"), except ERROR_NOT_SUPPORTED for clocks,
// power limit, MIG mode, NVLink, P2P status and topology, which leaves the
// field zero and lists it in Unsupported. Selecting a GPU that does not
// exist, the same GPU twice, or a whole GPU that has MIG enabled, is an
// error.
func Collect(lib nvml.Interface, sel Selection) (p Provenance, err error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND || ret == nvml.ERROR_DRIVER_NOT_LOADED {
			return Provenance{}, fmt.Errorf("nvml: Init: %w: %w: no NVIDIA driver or NVML library (libnvidia-ml.so.1); deepprof profiles NVIDIA GPUs: run it on a GPU machine", ret, ErrNoGPU)
		}
		return Provenance{}, fmt.Errorf("nvml: Init: %w", ret)
	}
	defer func() {
		if ret := lib.Shutdown(); ret != nvml.SUCCESS && err == nil {
			p, err = Provenance{}, fmt.Errorf("nvml: Shutdown: %w", ret)
		}
	}()

	c := collector{p: Provenance{Unsupported: []string{}}}
	var ret nvml.Return
	if c.p.Driver, ret = lib.SystemGetDriverVersion(); ret != nvml.SUCCESS {
		return Provenance{}, callError(ret, "SystemGetDriverVersion()")
	}
	cuda, ret := lib.SystemGetCudaDriverVersion()
	if ret != nvml.SUCCESS {
		return Provenance{}, callError(ret, "SystemGetCudaDriverVersion()")
	}
	c.p.CUDADriverVersion = fmt.Sprintf("%d.%d", cuda/1000, cuda%1000/10)
	if c.p.NVMLVersion, ret = lib.SystemGetNVMLVersion(); ret != nvml.SUCCESS {
		return Provenance{}, callError(ret, "SystemGetNVMLVersion()")
	}
	if c.p.DeviceCount, ret = lib.DeviceGetCount(); ret != nvml.SUCCESS {
		return Provenance{}, callError(ret, "DeviceGetCount()")
	}
	if c.p.DeviceCount == 0 {
		return Provenance{}, fmt.Errorf("nvml: DeviceGetCount() = 0: %w; deepprof profiles NVIDIA GPUs: run it on a GPU machine", ErrNoGPU)
	}
	c.p.GPUs = make([]GPU, c.p.DeviceCount)
	c.devs = make([]nvml.Device, c.p.DeviceCount)
	for i := range c.p.GPUs {
		dev, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return Provenance{}, callError(ret, "DeviceGetHandleByIndex(%d)", i)
		}
		c.devs[i] = dev
		if c.p.GPUs[i], err = c.gpu(i, dev); err != nil {
			return Provenance{}, err
		}
	}
	if err := c.use(lib, sel); err != nil {
		return Provenance{}, err
	}
	if err := c.topology(); err != nil {
		return Provenance{}, err
	}
	return c.p, nil
}

// collector gathers one Provenance.
type collector struct {
	p    Provenance
	devs []nvml.Device // by NVML index
}

// callError wraps a non-success NVML return with the call that returned it.
func callError(ret nvml.Return, format string, args ...any) error {
	return fmt.Errorf("nvml: %s: %w", fmt.Sprintf(format, args...), ret)
}

// optional reports whether an optional read succeeded: ERROR_NOT_SUPPORTED
// records field as unsupported and is no error; any other failure is.
func (c *collector) optional(ret nvml.Return, field, format string, args ...any) (bool, error) {
	switch ret {
	case nvml.SUCCESS:
		return true, nil
	case nvml.ERROR_NOT_SUPPORTED:
		c.p.Unsupported = append(c.p.Unsupported, field)
		return false, nil
	}
	return false, callError(ret, format, args...)
}

// gpu reads the provenance of GPU i.
func (c *collector) gpu(i int, dev nvml.Device) (GPU, error) {
	g := GPU{Index: i}
	var ret nvml.Return
	if g.Name, ret = dev.GetName(); ret != nvml.SUCCESS {
		return GPU{}, callError(ret, "DeviceGetName(%d)", i)
	}
	if g.UUID, ret = dev.GetUUID(); ret != nvml.SUCCESS {
		return GPU{}, callError(ret, "DeviceGetUUID(%d)", i)
	}
	pci, ret := dev.GetPciInfo()
	if ret != nvml.SUCCESS {
		return GPU{}, callError(ret, "DeviceGetPciInfo(%d)", i)
	}
	g.PCIBusID = cString(pci.BusId[:])
	mem, ret := dev.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return GPU{}, callError(ret, "DeviceGetMemoryInfo(%d)", i)
	}
	g.MemoryTotalBytes = mem.Total
	major, minor, ret := dev.GetCudaComputeCapability()
	if ret != nvml.SUCCESS {
		return GPU{}, callError(ret, "DeviceGetCudaComputeCapability(%d)", i)
	}
	g.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)

	field := func(name string) string { return fmt.Sprintf("gpus[%d].%s", i, name) }
	clocks := []struct {
		dst   *uint32
		get   func(nvml.ClockType) (uint32, nvml.Return)
		clock nvml.ClockType
		field string
		call  string
	}{
		{&g.MaxSMClockMHz, dev.GetMaxClockInfo, nvml.CLOCK_SM, "max_sm_clock_mhz", "DeviceGetMaxClockInfo(%d, CLOCK_SM)"},
		{&g.MaxMemClockMHz, dev.GetMaxClockInfo, nvml.CLOCK_MEM, "max_mem_clock_mhz", "DeviceGetMaxClockInfo(%d, CLOCK_MEM)"},
		{&g.SMClockMHz, dev.GetClockInfo, nvml.CLOCK_SM, "sm_clock_mhz", "DeviceGetClockInfo(%d, CLOCK_SM)"},
	}
	for _, k := range clocks {
		mhz, ret := k.get(k.clock)
		ok, err := c.optional(ret, field(k.field), k.call, i)
		if err != nil {
			return GPU{}, err
		}
		if ok {
			*k.dst = mhz
		}
	}

	mw, ret := dev.GetEnforcedPowerLimit()
	ok, err := c.optional(ret, field("power_limit_w"), "DeviceGetEnforcedPowerLimit(%d)", i)
	if err != nil {
		return GPU{}, err
	}
	if ok {
		g.PowerLimitW = float64(mw) / 1000
	}

	if g.MIG, err = c.mig(i, dev, field("mig")); err != nil {
		return GPU{}, err
	}
	return g, nil
}

// mig reads GPU i's MIG mode and counts its MIG devices.
func (c *collector) mig(i int, dev nvml.Device, field string) (MIGInfo, error) {
	current, pending, ret := dev.GetMigMode()
	if ok, err := c.optional(ret, field, "DeviceGetMigMode(%d)", i); !ok {
		return MIGInfo{}, err
	}
	m := MIGInfo{Enabled: current == nvml.DEVICE_MIG_ENABLE, Pending: pending != current}
	if !m.Enabled {
		return m, nil
	}
	n, ret := dev.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return MIGInfo{}, callError(ret, "DeviceGetMaxMigDeviceCount(%d)", i)
	}
	for j := range n {
		switch _, ret := dev.GetMigDeviceHandleByIndex(j); ret {
		case nvml.SUCCESS:
			m.Instances++
		case nvml.ERROR_NOT_FOUND: // an empty slot
		default:
			return MIGInfo{}, callError(ret, "DeviceGetMigDeviceHandleByIndex(%d, %d)", i, j)
		}
	}
	return m, nil
}

// use resolves sel against the GPUs found and fills CUDAVisibleDevices,
// Used, Selected and MIGDevice.
func (c *collector) use(lib nvml.Interface, sel Selection) error {
	c.p.CUDAVisibleDevices = sel.CUDAVisibleDevices()
	if sel.All {
		for _, g := range c.p.GPUs {
			if err := wholeGPU(g); err != nil {
				return err
			}
		}
		c.p.Used = append([]GPU{}, c.p.GPUs...)
		c.p.Selected = c.p.Used[0]
		return nil
	}
	devs := sel.Devices()
	whole := map[int]bool{}
	for k, d := range devs {
		// One device is a device= setting; a list is CUDA_VISIBLE_DEVICES.
		name := "device=" + d.String()
		if len(devs) > 1 {
			name = fmt.Sprintf("CUDA_VISIBLE_DEVICES=%s: %s", c.p.CUDAVisibleDevices, d.CUDAVisibleDevices())
		}
		idx, err := c.resolve(lib, d, k == 0, name)
		if err != nil {
			return err
		}
		if !d.IsMIG() {
			if whole[idx] {
				return fmt.Errorf("%s: GPU %d is named twice", name, idx)
			}
			whole[idx] = true
		}
		c.p.Used = append(c.p.Used, c.p.GPUs[idx])
	}
	c.p.Selected = c.p.Used[0]
	return nil
}

// resolve returns the NVML index of the GPU of d: for a MIG instance, its
// parent; the MIG instance of the first device is recorded in MIGDevice.
// name is d for errors.
func (c *collector) resolve(lib nvml.Interface, d Selection, first bool, name string) (int, error) {
	idx := -1
	switch {
	case d.IsMIG():
		mig, err := c.migDevice(lib, d.UUID, first)
		if err != nil {
			return 0, err
		}
		parent, ret := mig.GetDeviceHandleFromMigDeviceHandle()
		if ret != nvml.SUCCESS {
			return 0, callError(ret, "DeviceGetDeviceHandleFromMigDeviceHandle(%s)", d.UUID)
		}
		if idx, ret = parent.GetIndex(); ret != nvml.SUCCESS {
			return 0, callError(ret, "DeviceGetIndex(parent of %s)", d.UUID)
		}
		if idx < 0 || idx >= len(c.p.GPUs) {
			return 0, fmt.Errorf("%s: parent GPU index %d is not among the %s", name, idx, c.found())
		}
		return idx, nil
	case d.UUID != "":
		for i, g := range c.p.GPUs {
			if g.UUID == d.UUID {
				idx = i
			}
		}
		if idx < 0 {
			return 0, fmt.Errorf("%s: no such GPU; %s", name, c.found())
		}
	default:
		if d.Index < 0 || d.Index >= len(c.p.GPUs) {
			return 0, fmt.Errorf("%s: no such GPU; %s", name, c.found())
		}
		idx = d.Index
	}
	return idx, wholeGPU(c.p.GPUs[idx])
}

// wholeGPU refuses a whole GPU that has MIG enabled: CUDA runs on its MIG
// instances only.
func wholeGPU(g GPU) error {
	if g.MIG.Enabled {
		return fmt.Errorf("GPU %d (%s) has MIG enabled: choose a MIG instance with device=MIG-<uuid> (nvidia-smi -L lists them)", g.Index, g.Name)
	}
	return nil
}

// migDevice looks up a MIG instance by UUID and, when record is set,
// records it in MIGDevice.
func (c *collector) migDevice(lib nvml.Interface, uuid string, record bool) (nvml.Device, error) {
	mig, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("%w (%s)", callError(ret, "DeviceGetHandleByUUID(%s)", uuid), c.found())
	}
	if !record {
		return mig, nil
	}
	d := MIGDevice{UUID: uuid}
	if d.Name, ret = mig.GetName(); ret != nvml.SUCCESS {
		return nil, callError(ret, "DeviceGetName(%s)", uuid)
	}
	mem, ret := mig.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return nil, callError(ret, "DeviceGetMemoryInfo(%s)", uuid)
	}
	d.MemoryTotalBytes = mem.Total
	c.p.MIGDevice = &d
	return mig, nil
}

// found lists the GPUs found, for errors: "2 GPUs found: 0 NVIDIA H200
// (GPU-…), 1 NVIDIA H200 (GPU-…)".
func (c *collector) found() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d GPU", len(c.p.GPUs))
	if len(c.p.GPUs) != 1 {
		b.WriteString("s")
	}
	b.WriteString(" found:")
	for i, g := range c.p.GPUs {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d %s (%s)", g.Index, g.Name, g.UUID)
		if g.MIG.Enabled {
			b.WriteString(" MIG enabled")
		}
	}
	return b.String()
}

// cString returns the NUL-terminated string at the start of b.
func cString(b []uint8) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
