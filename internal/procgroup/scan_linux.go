package procgroup

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// listProcs reads the process table from /proc. The marker is read only for
// processes that started at or after since (clock ticks after boot): a
// group's processes are all younger than its first one, and reading every
// process's environment would cost a syscall each for nothing.
func listProcs(since uint64) ([]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	ps := make([]procInfo, 0, len(names))
	buf := make([]byte, 1024)
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		p, ok := parseStat(n, readProcFile("/proc/"+n+"/stat", &buf))
		if !ok {
			continue
		}
		if p.live && p.start >= since {
			if env, err := os.ReadFile("/proc/" + n + "/environ"); err == nil {
				p.token = markerIn(env)
			}
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// readStat parses /proc/<pid>/stat: pid (comm) state ppid pgrp ... with the
// start time the 22nd field. comm may hold spaces and parentheses, so the
// fields are read after the last ')'.
func readStat(pid string) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	return parseStat(pid, b)
}

// parseStat parses the contents of /proc/<pid>/stat (nil: unreadable).
func parseStat(pid string, b []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	p := procInfo{live: f[0][0] != 'Z' && f[0][0] != 'X'}
	p.pid, _ = strconv.Atoi(pid)
	p.ppid, _ = strconv.Atoi(string(f[1]))
	p.pgid, _ = strconv.Atoi(string(f[2]))
	p.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return p, true
}

// startOf is a process's start time, for listProcs's since.
func startOf(pid int) uint64 {
	p, ok := readStat(strconv.Itoa(pid))
	if !ok {
		return 0
	}
	return p.start
}

// readProcFile reads a small /proc file into *buf (grown when it fills),
// returning nil when it cannot be read. The scan runs at the end of every
// command for every process on the machine; os.ReadFile's poller
// registration and fstat cost four more system calls a file than open, read
// and close (BenchmarkAliveAfterExit).
func readProcFile(path string, buf *[]byte) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(*buf) {
			*buf = append(*buf, make([]byte, len(*buf))...)
		}
		m, err := syscall.Read(fd, (*buf)[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil
		}
		if m == 0 {
			return (*buf)[:n]
		}
		n += m
	}
}
