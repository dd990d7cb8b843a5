package bash

import (
	"os"
	"syscall"
)

// pipeBytes is the capacity asked of each output pipe. Linux's default
// (64 KiB) makes a fast writer wake us for every 64 KiB; a larger pipe lets
// one read take more, which is most of the throughput on bulk output.
const pipeBytes = 1 << 20

// growPipe enlarges the pipe behind f (F_SETPIPE_SZ). Failing (the system
// limit /proc/sys/fs/pipe-max-size is lower) leaves the default: only speed
// depends on it.
func growPipe(f *os.File) {
	const fSetPipeSz = 1031
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fSetPipeSz, pipeBytes)
}
