package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/agent"
	"github.com/acp-bridge/acp-bridge/remote"
)

// `acp-bridge serve`: ACP over Streamable HTTP and WebSocket (package
// remote) instead of stdio, with every setting of the stdio mode (the
// flags, the environment, the config file: prepare in run.go) plus its own.

const defaultListen = "127.0.0.1:8741"

// serveConfig are serve's own settings.
type serveConfig struct {
	listen          string
	tokenFile       string
	tlsCert, tlsKey string
	insecure        bool
	origins, hosts  listFlag
	roots           listFlag
	maxConns        int
	maxSessions     int
	idle, grace     time.Duration
}

// listFlag is a flag given any number of times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func (sc *serveConfig) flags(fl *flag.FlagSet) {
	fl.StringVar(&sc.listen, "listen", defaultListen, "serve: the address to listen on (:0 picks a free port); any but loopback needs a token and TLS")
	fl.StringVar(&sc.tokenFile, "token-file", "", "serve: a file holding the bearer token clients must send (env ACP_BRIDGE_TOKEN); readable by its owner only")
	fl.StringVar(&sc.tlsCert, "tls-cert", "", "serve: the TLS certificate (PEM)")
	fl.StringVar(&sc.tlsKey, "tls-key", "", "serve: the TLS private key (PEM)")
	fl.BoolVar(&sc.insecure, "insecure-plaintext", false, "serve: allow a non-loopback address without TLS (behind a TLS-terminating proxy)")
	fl.Var(&sc.origins, "allow-origin", "serve: a browser origin allowed to call, scheme://host[:port] (repeatable; default: loopback origins for a loopback address, none otherwise)")
	fl.Var(&sc.hosts, "allow-host", "serve: a name clients reach the server by, checked against Host (repeatable; loopback names and the listen address are always allowed)")
	fl.Var(&sc.roots, "root", "serve: a directory sessions may work in, with what is under it (repeatable; default: the directory serve starts in)")
	fl.IntVar(&sc.maxConns, "max-connections", 64, "serve: connections at once")
	fl.IntVar(&sc.maxSessions, "max-sessions", 256, "serve: sessions open at once, across connections")
	fl.DurationVar(&sc.idle, "idle-timeout", 10*time.Minute, "serve: a connection nobody listens to is closed after this")
	fl.DurationVar(&sc.grace, "shutdown-grace", 30*time.Second, "serve: on SIGTERM, how long running turns may take to end")
}

// resolved is a serveConfig checked and made ready: a loopback address or
// one with a token and TLS (or --insecure-plaintext), the token read, the
// roots absolute.
type resolved struct {
	host     string // of --listen
	loopback bool
	token    string
	tls      *tls.Config
}

// resolve checks serve's settings; wd is where relative roots start.
func (sc *serveConfig) resolve(wd string) (*resolved, error) {
	host, _, err := net.SplitHostPort(sc.listen)
	if err != nil {
		return nil, usageError{fmt.Errorf("--listen %q: %v (want HOST:PORT, e.g. %s)", sc.listen, err, defaultListen)}
	}
	r := &resolved{host: host, loopback: isLoopback(host)}
	if r.token, err = readToken(sc.tokenFile); err != nil {
		return nil, err
	}
	if (sc.tlsCert == "") != (sc.tlsKey == "") {
		return nil, usageError{errors.New("--tls-cert and --tls-key go together")}
	}
	if sc.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(sc.tlsCert, sc.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("the TLS certificate: %w", err)
		}
		r.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if !r.loopback {
		if r.token == "" {
			return nil, usageError{fmt.Errorf("--listen %s is not loopback: set a token (--token-file or ACP_BRIDGE_TOKEN) so that only your clients can start commands here", sc.listen)}
		}
		if r.tls == nil && !sc.insecure {
			return nil, usageError{fmt.Errorf("--listen %s is not loopback: set --tls-cert and --tls-key, or --insecure-plaintext if a TLS proxy is in front (the token would otherwise cross the network in clear)", sc.listen)}
		}
	}
	if len(sc.roots) == 0 {
		sc.roots = listFlag{wd}
	}
	for _, o := range sc.origins {
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			return nil, usageError{fmt.Errorf("--allow-origin %q: want scheme://host[:port]", o)}
		}
	}
	return r, nil
}

// isLoopback: localhost or a loopback IP. "" (every interface) is not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readToken reads the token from file, else ACP_BRIDGE_TOKEN. A file
// others can read is refused (its token would not be a secret), and so is
// a token short enough to guess.
func readToken(file string) (string, error) {
	tok, from := strings.TrimSpace(os.Getenv("ACP_BRIDGE_TOKEN")), "ACP_BRIDGE_TOKEN"
	if file != "" {
		fi, err := os.Stat(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("--token-file %s can be read by others (mode %v): chmod 600 it", file, fi.Mode().Perm())
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok, from = strings.TrimSpace(string(b)), "--token-file "+file
	}
	if tok != "" && len(tok) < 16 {
		return "", fmt.Errorf("%s: the token is %d characters; use at least 16 (e.g. openssl rand -hex 32)", from, len(tok))
	}
	return tok, nil
}

// runServe is `acp-bridge serve`.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "acp-bridge serve"
	var sc serveConfig
	b, code, ok := prepare(name, args, stdout, stderr, sc.flags)
	if !ok {
		return code
	}
	defer b.stop()
	wd, _ := os.Getwd()
	r, err := sc.resolve(wd)
	if err != nil {
		printStartError(stderr, name, err)
		return 2
	}
	srv, err := remote.New(remoteOptions(&sc, r, b.opts))
	if err != nil {
		printStartError(stderr, name, err)
		return 2
	}
	ln, err := net.Listen("tcp", sc.listen)
	if err != nil {
		srv.Close()
		printStartError(stderr, name, err)
		return 1
	}
	hs, l := srv.HTTPServer(ln, 0)
	scheme := "http"
	if r.tls != nil {
		scheme = "https"
		hs.TLSConfig = r.tls
	}
	// Another process (a stdio bridge, a client of another connection)
	// resuming a session a connection holds asks for it; an idle one is
	// handed over (agent/handover.go).
	defer watchHandOver(srv.HandOverRequested)()
	served := make(chan error, 1)
	go func() {
		if r.tls != nil {
			served <- hs.ServeTLS(l, "", "")
		} else {
			served <- hs.Serve(l)
		}
	}()
	fmt.Fprintf(stderr, "listening on %s://%s%s\n", scheme, ln.Addr(), remote.Path)
	if b.cfg.stateDir == "" {
		b.log.Warn("no state directory: a session ends with its connection and cannot be loaded on another")
	}
	b.log.Info("serving ACP", "addr", ln.Addr().String(), "tls", r.tls != nil, "token", r.token != "", "roots", []string(sc.roots), "version", b.opts.Version)
	select {
	case err := <-served:
		srv.Close()
		b.log.Error("serving stopped", "err", err)
		return 1
	case <-ctx.Done():
	}
	// Running turns may end (their clients still connected) within the
	// grace period; then every connection ends, its agent saving its
	// sessions, and the listener closes.
	b.log.Info("shutting down", "cause", context.Cause(ctx), "grace", sc.grace)
	gctx, cancel := context.WithTimeout(context.Background(), sc.grace)
	defer cancel()
	if err := srv.Shutdown(gctx); err != nil {
		b.log.Warn("turns still running at the end of the grace period were cancelled")
	}
	sctx, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		hs.Close()
	}
	b.log.Info("stopped")
	return 0
}

// remoteOptions are the server's options: each connection's agent has the
// stdio mode's options, less the terminal login (a remote client cannot
// run a command in the agent's environment), logout and providers/* (the
// key and the endpoints are every connection's: one client must not
// delete or redirect what the others use).
func remoteOptions(sc *serveConfig, r *resolved, opts agent.Options) remote.Options {
	opts.TerminalLogin, opts.Logout, opts.Routes = nil, nil, nil
	hosts := append([]string(nil), sc.hosts...)
	if r.host != "" && !net.ParseIP(r.host).IsUnspecified() {
		hosts = append(hosts, r.host)
	} else {
		// Every interface: the names this machine has, and its addresses.
		if h, err := os.Hostname(); err == nil {
			hosts = append(hosts, h)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					hosts = append(hosts, n.IP.String())
				}
			}
		}
	}
	return remote.Options{
		NewAgent:        func(c acp.Client) remote.Agent { return agent.New(c, opts) },
		Logger:          opts.Logger,
		Token:           r.token,
		Hosts:           hosts,
		Origins:         sc.origins,
		LoopbackOrigins: r.loopback,
		Roots:           sc.roots,
		MaxConnections:  sc.maxConns,
		MaxSessions:     sc.maxSessions,
		IdleTimeout:     sc.idle,
	}
}
