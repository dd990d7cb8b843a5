package procgroup

import (
	"time"

	"golang.org/x/sys/unix"
)

// listProcs reads the process table with sysctl (kern.proc.all); the marker
// comes from each young process's kern.procargs2, which holds its initial
// environment. since is in seconds (the table's start times are).
func listProcs(since uint64) ([]procInfo, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	const zombie = 5 // SZOMB
	ps := make([]procInfo, 0, len(kps))
	for _, k := range kps {
		p := procInfo{pid: int(k.Proc.P_pid), ppid: int(k.Eproc.Ppid), pgid: int(k.Eproc.Pgid),
			live: k.Proc.P_stat != zombie, start: uint64(k.Proc.P_starttime.Sec)}
		if p.live && p.start >= since && p.pid > 0 {
			if b, err := unix.SysctlRaw("kern.procargs2", p.pid); err == nil {
				p.token = markerIn(envOfProcArgs(b))
			}
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// startOf is the start time to pass as since: a second before now (the
// table's start times are whole seconds).
func startOf(int) uint64 { return uint64(time.Now().Unix() - 1) }
