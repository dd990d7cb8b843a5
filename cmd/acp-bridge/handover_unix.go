//go:build unix

package main

import (
	"os"
	"os/signal"

	"github.com/acp-bridge/acp-bridge/session"
)

// watchHandOver calls f whenever another acp-bridge asks this one to hand
// over a session it holds (session.RequestHandOver wakes it with
// session.HandOverSignal). It returns the function that stops watching.
func watchHandOver(f func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, session.HandOverSignal)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				f()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
