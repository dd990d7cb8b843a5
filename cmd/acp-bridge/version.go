package main

import "runtime/debug"

// commit is set at build time with -ldflags "-X main.commit=..." (the
// release script does); else the VCS revision go build recorded, if any.
var commit = ""

// versionLine is what --version prints: the version and the commit it was
// built from.
func versionLine() string {
	c := commit
	if c == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	if c == "" {
		return "acp-bridge " + agentVersion()
	}
	if len(c) > 12 {
		c = c[:12]
	}
	return "acp-bridge " + agentVersion() + " (commit " + c + ")"
}
