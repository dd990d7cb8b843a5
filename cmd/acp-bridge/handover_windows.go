//go:build windows

package main

// watchHandOver: Windows has no user signals, so no other process wakes
// this one to hand a session over (session.RequestHandOver says so to the
// one asking).
func watchHandOver(func()) (stop func()) { return func() {} }
