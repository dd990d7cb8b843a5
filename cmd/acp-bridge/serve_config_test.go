package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for names, valid from
// notBefore to notAfter, and its key.
func writeCert(t *testing.T, names []string, notBefore, notAfter time.Time) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// TestServeSettings: what serve refuses to start with, and what it takes.
func TestServeSettings(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	os.WriteFile(good, []byte("0123456789abcdef0123\n"), 0o600)
	open := filepath.Join(dir, "open-token")
	os.WriteFile(open, []byte("0123456789abcdef0123\n"), 0o644)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc"), 0o600)
	cert, key := writeCert(t, []string{"devbox.example"}, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	t.Setenv("ACP_BRIDGE_TOKEN", "")
	for _, tc := range []struct {
		name string
		args []string
		env  string // ACP_BRIDGE_TOKEN
		want string // "" ok, else part of the error
	}{
		{"default loopback", nil, "", ""},
		{"free port", []string{"--listen", "127.0.0.1:0"}, "", ""},
		{"localhost", []string{"--listen", "localhost:0"}, "", ""},
		{"ipv6 loopback", []string{"--listen", "[::1]:0"}, "", ""},
		{"all interfaces, nothing", []string{"--listen", ":8741"}, "", "set a token"},
		{"all interfaces, token only", []string{"--listen", "0.0.0.0:8741", "--token-file", good}, "", "--tls-cert"},
		{"all interfaces, env token, plaintext", []string{"--listen", "0.0.0.0:8741", "--insecure-plaintext"}, "0123456789abcdef0123", ""},
		{"all interfaces, token and TLS", []string{"--listen", "0.0.0.0:8741", "--token-file", good, "--tls-cert", cert, "--tls-key", key}, "", ""},
		{"TLS without key", []string{"--tls-cert", cert}, "", "go together"},
		{"TLS key mismatch", []string{"--tls-cert", cert, "--tls-key", good}, "", "certificate"},
		{"short token", []string{"--token-file", short}, "", "at least 16"},
		{"short env token", nil, "abc", "at least 16"},
		{"no port", []string{"--listen", "127.0.0.1"}, "", "HOST:PORT"},
		{"bad origin", []string{"--allow-origin", "evil.example"}, "", "scheme://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ACP_BRIDGE_TOKEN", tc.env)
			var sc serveConfig
			fl := flag.NewFlagSet("x", flag.ContinueOnError)
			fl.SetOutput(io.Discard)
			sc.flags(fl)
			if err := fl.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			_, err := sc.resolve(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
	if runtime.GOOS != "windows" {
		var sc serveConfig
		sc.listen, sc.tokenFile = defaultListen, open
		if _, err := sc.resolve(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("a token file others can read: %v", err)
		}
	}
}

// TestDoctorServe: doctor serve reports the exposure, the token file, the
// certificate (expired, wrong name) and the roots.
func TestDoctorServe(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("0123456789abcdef0123"), 0o600)
	cert, key := writeCert(t, []string{"devbox.example"}, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	old, oldKey := writeCert(t, []string{"devbox.example"}, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	t.Setenv("ACP_BRIDGE_STATE_DIR", t.TempDir())
	line := func(checks []check, name string) check {
		for _, c := range checks {
			if c.name == name {
				return c
			}
		}
		t.Fatalf("no %s check in %+v", name, checks)
		return check{}
	}
	base := []string{"serve", "--model", "script:" + filepath.Join("testdata", "nonexistent"), "--listen", "0.0.0.0:8741", "--token-file", tok}
	checks := doctor(t.Context(), append(base, "--tls-cert", cert, "--tls-key", key, "--allow-host", "devbox.example", "--root", dir))
	if c := line(checks, "tls"); !c.ok || !strings.Contains(c.msg, "valid until") {
		t.Errorf("tls: %+v", c)
	}
	if c := line(checks, "token"); !c.ok {
		t.Errorf("token: %+v", c)
	}
	if c := line(checks, "roots"); !c.ok {
		t.Errorf("roots: %+v", c)
	}
	checks = doctor(t.Context(), append(base, "--tls-cert", cert, "--tls-key", key, "--allow-host", "other.example"))
	if c := line(checks, "tls"); c.ok || !strings.Contains(c.msg, "other.example") {
		t.Errorf("a certificate for another name: %+v", c)
	}
	checks = doctor(t.Context(), append(base, "--tls-cert", old, "--tls-key", oldKey))
	if c := line(checks, "tls"); c.ok || !strings.Contains(c.msg, "expired") {
		t.Errorf("an expired certificate: %+v", c)
	}
	checks = doctor(t.Context(), append(base, "--insecure-plaintext", "--root", filepath.Join(dir, "missing")))
	if c := line(checks, "roots"); c.ok {
		t.Errorf("a missing root: %+v", c)
	}
	checks = doctor(t.Context(), base)
	if c := line(checks, "serve"); c.ok || !strings.Contains(c.msg, "--tls-cert") {
		t.Errorf("no TLS on a network address: %+v", c)
	}
}
