package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// serveDoctorArgs splits `doctor serve ARGS` into serve's settings (nil
// for a plain `doctor`) and the arguments to parse.
func serveDoctorArgs(args []string) (*serveConfig, []string) {
	if len(args) > 0 && args[0] == "serve" {
		return &serveConfig{}, args[1:]
	}
	return nil, args
}

// flagSets adds serve's flags to doctor's, when checking serve.
func (sc *serveConfig) flagSets() []func(*flag.FlagSet) {
	if sc == nil {
		return nil
	}
	return []func(*flag.FlagSet){sc.flags}
}

// checks are doctor's lines for a serve configuration: what is exposed
// and how it is protected, the token, the certificate, the roots.
func (sc *serveConfig) checks() []check {
	if sc == nil {
		return nil
	}
	var out []check
	wd, _ := os.Getwd()
	r, err := sc.resolve(wd)
	if err != nil {
		msg := err.Error()
		return append(out, check{name: "serve", msg: msg, fix: serveFix(msg)})
	}
	switch {
	case r.loopback:
		out = append(out, check{name: "serve", ok: true, msg: sc.listen + " is loopback: only this machine can connect"})
	case r.tls != nil:
		out = append(out, check{name: "serve", ok: true, msg: sc.listen + " is reachable from the network, with TLS and a token"})
	default:
		out = append(out, check{name: "serve", ok: true, msg: sc.listen + " is reachable from the network with a token, without TLS (--insecure-plaintext: a TLS proxy must be in front)"})
	}
	switch {
	case sc.tokenFile != "":
		out = append(out, check{name: "token", ok: true, msg: sc.tokenFile + " is readable by its owner only"})
	case r.token != "":
		out = append(out, check{name: "token", ok: true, msg: "from ACP_BRIDGE_TOKEN"})
	default:
		out = append(out, check{name: "token", ok: true, msg: "none: any local process (any user of this machine) can connect; set --token-file on a shared machine"})
	}
	if r.tls != nil {
		out = append(out, certCheck(r.tls.Certificates[0], sc.hosts))
	}
	for _, root := range sc.roots {
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() {
			out = append(out, check{name: "roots", msg: root + " is not a directory", fix: "point --root at the directories sessions may work in"})
			continue
		}
		out = append(out, check{name: "roots", ok: true, msg: "sessions may work under " + root})
	}
	return out
}

// certCheck: the certificate is current and names the hosts clients use.
func certCheck(cert tls.Certificate, hosts []string) check {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return check{name: "tls", msg: "the certificate does not parse: " + err.Error(), fix: "give --tls-cert a PEM certificate"}
	}
	now := time.Now()
	switch {
	case now.After(leaf.NotAfter):
		return check{name: "tls", msg: "the certificate expired on " + leaf.NotAfter.Format(time.DateOnly), fix: "renew it"}
	case now.Before(leaf.NotBefore):
		return check{name: "tls", msg: "the certificate is not valid before " + leaf.NotBefore.Format(time.DateOnly), fix: "check the clock, or the certificate"}
	}
	for _, h := range hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			return check{name: "tls", msg: "the certificate does not name " + h + " (" + err.Error() + ")", fix: "use a certificate for the names in --allow-host"}
		}
	}
	return check{name: "tls", ok: true, msg: fmt.Sprintf("the certificate and key match, valid until %s", leaf.NotAfter.Format(time.DateOnly))}
}

func serveFix(msg string) string {
	switch {
	case strings.Contains(msg, "chmod"):
		return "chmod 600 the token file"
	case strings.Contains(msg, "token"):
		return "set --token-file (or ACP_BRIDGE_TOKEN) to a long random secret"
	case strings.Contains(msg, "TLS") || strings.Contains(msg, "tls"):
		return "give --tls-cert and --tls-key a matching PEM certificate and key"
	}
	return "correct the serve flag it names"
}
