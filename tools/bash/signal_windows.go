package bash

import "syscall"

// signalName: Windows processes do not die of signals (WaitStatus never
// says Signaled), so this only names what syscall knows.
func signalName(s syscall.Signal) string { return s.String() }
