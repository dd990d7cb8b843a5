//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// connectArg is a mode of this test binary (TestMain): open an internet
// socket of one protocol and connect it, the way a program that wants to
// get around the network rule would. It is run as the command a policy
// confines, so what it reports is what the kernel let the command do.
const connectArg = "sandbox-test-connect"

// ipprotoMPTCP is Multipath TCP's protocol number (IPPROTO_MPTCP).
const ipprotoMPTCP = 262

// connectMain serves connectArg: args are the protocol number and the
// address (host:port). It prints "connected", or the step that failed
// and the errno's name, and exits 0 only when connected.
func connectMain(args []string) int {
	if len(args) != 2 {
		fmt.Println("usage: " + connectArg + " PROTO HOST:PORT")
		return 2
	}
	proto, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Println(err)
		return 2
	}
	addr, err := net.ResolveTCPAddr("tcp4", args[1])
	if err != nil {
		fmt.Println(err)
		return 2
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, proto)
	if err != nil {
		fmt.Printf("socket: %s (%v)\n", errnoName(err), err)
		return 1
	}
	defer syscall.Close(fd)
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	if err := syscall.Connect(fd, sa); err != nil {
		fmt.Printf("connect: %s (%v)\n", errnoName(err), err)
		return 1
	}
	fmt.Println("connected")
	return 0
}

func errnoName(err error) string {
	switch err {
	case syscall.EPERM:
		return "EPERM"
	case syscall.EACCES:
		return "EACCES"
	case syscall.EPROTONOSUPPORT:
		return "EPROTONOSUPPORT"
	case syscall.ENOPROTOOPT:
		return "ENOPROTOOPT"
	}
	return "other"
}
