// Command release builds acp-bridge's release: reproducible archives for
// every platform Zed runs on, their SHA256SUMS, and the ACP Registry entry
// (registry/<id>/agent.json and icon.svg). scripts/release.sh runs it:
//
//	go run ./internal/release [flags] VERSION OUTDIR
//
// The same commit gives the same bytes: binaries are built with -trimpath
// and without VCS stamping beyond the commit passed in, archives list their
// files in a fixed order with the commit's time as every mtime and no owner.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ID is the agent's id in the ACP Registry. "acp-bridge" is taken there by
// an unrelated project; the binary keeps its name.
const ID = "acp-bridge-go"

// DefaultDownload is where the release's archives are published.
const DefaultDownload = "https://github.com/acp-bridge/acp-bridge/releases/download"

//go:embed icon.svg
var icon []byte

// Platform is one release target.
type Platform struct {
	GOOS, GOARCH string
}

// All are the targets: every platform Zed runs on.
var All = []Platform{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// RegistryName is the registry's name for the platform.
func (p Platform) RegistryName() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[p.GOARCH]
	return p.GOOS + "-" + arch
}

func (p Platform) exe() string {
	if p.GOOS == "windows" {
		return "acp-bridge.exe"
	}
	return "acp-bridge"
}

// Archive is the archive's file name for version.
func (p Platform) Archive(version string) string {
	ext := ".tar.gz"
	if p.GOOS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("acp-bridge-%s-%s-%s%s", version, p.GOOS, p.GOARCH, ext)
}

// Options are one release run's inputs.
type Options struct {
	Version   string     // semver, without a leading v
	Commit    string     // stamped into --version
	Time      time.Time  // every archive entry's mtime
	Platforms []Platform // default All
	Download  string     // base URL; the archive is at Download/vVERSION/NAME
	Repo      string     // the module's root directory (go build runs there)
	// Build writes the binary for p to bin; nil is go build. Tests put a
	// stand-in here to check everything but the compiler quickly.
	Build func(o Options, p Platform, bin string) error
}

var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// Run builds everything into out.
func Run(o Options, out string, log io.Writer) error {
	if !semver.MatchString(o.Version) {
		return fmt.Errorf("version %q is not semver (like 1.2.3, without a leading v)", o.Version)
	}
	if len(o.Platforms) == 0 {
		o.Platforms = All
	}
	if o.Download == "" {
		o.Download = DefaultDownload
	}
	if o.Build == nil {
		o.Build = build
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "acp-bridge-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	docs, err := readDocs(o.Repo)
	if err != nil {
		return err
	}
	sums := map[string]string{}
	for _, p := range o.Platforms {
		fmt.Fprintf(log, "building %s/%s\n", p.GOOS, p.GOARCH)
		bin := filepath.Join(work, p.GOOS+"-"+p.GOARCH, p.exe())
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return err
		}
		if err := o.Build(o, p, bin); err != nil {
			return err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		files := append([]file{{name: p.exe(), data: data, mode: 0o755}}, docs...)
		var archive []byte
		if p.GOOS == "windows" {
			archive, err = zipOf(files, o.Time)
		} else {
			archive, err = tarGzOf(files, o.Time)
		}
		if err != nil {
			return err
		}
		name := p.Archive(o.Version)
		if err := os.WriteFile(filepath.Join(out, name), archive, 0o644); err != nil {
			return err
		}
		sums[name] = fmt.Sprintf("%x", sha256.Sum256(archive))
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), sumsFile(sums), 0o644); err != nil {
		return err
	}
	dir := filepath.Join(out, "registry", ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	manifest, err := json.MarshalIndent(Manifest(o), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.json"), append(manifest, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "icon.svg"), icon, 0o644)
}

// build compiles the binary for p: no cgo, no paths of this machine, the
// version and commit stamped in, no other VCS data.
func build(o Options, p Platform, bin string) error {
	ldflags := fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.commit=%s", o.Version, o.Commit)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/acp-bridge")
	cmd.Dir = o.Repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.GOOS, "GOARCH="+p.GOARCH, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s/%s: %v\n%s", p.GOOS, p.GOARCH, err, out)
	}
	return nil
}

type file struct {
	name string
	data []byte
	mode int64
}

// readDocs are the files shipped next to the binary.
func readDocs(repo string) ([]file, error) {
	var out []file
	for _, n := range []string{"README.md", "LICENSE"} {
		b, err := os.ReadFile(filepath.Join(repo, n))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, file{name: n, data: b, mode: 0o644})
	}
	return out, nil
}

func tarGzOf(files []file, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	// The gzip header's name and time stay empty: they would differ.
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)),
			ModTime: mtime.UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipOf(files []file, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime.UTC().Truncate(time.Second)}
		h.SetMode(os.FileMode(f.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sumsFile is sha256sum's format, sorted by name: `sha256sum -c` checks it.
func sumsFile(sums map[string]string) []byte {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	return []byte(b.String())
}

// Agent is the registry's agent.json.
type Agent struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Website      string       `json:"website,omitempty"`
	Authors      []string     `json:"authors,omitempty"`
	License      string       `json:"license,omitempty"`
	Distribution Distribution `json:"distribution"`
}

// Distribution lists one binary per platform.
type Distribution struct {
	Binary map[string]Binary `json:"binary"`
}

// Binary is one platform's download.
type Binary struct {
	Archive string   `json:"archive"`
	Cmd     string   `json:"cmd"`
	Args    []string `json:"args,omitempty"`
}

// Manifest is the registry entry for o (all platforms, whichever were built:
// the registry lists the full release).
func Manifest(o Options) Agent {
	download := o.Download
	if download == "" {
		download = DefaultDownload
	}
	a := Agent{
		ID:      ID,
		Name:    "ACP Bridge (Go)",
		Version: o.Version,
		Description: "A coding agent for DeepSeek or any OpenAI-compatible model: bash, file edits with diffs, " +
			"MCP servers and Code Mode, every step shown live; sessions saved and resumable.",
		Repository:   "https://github.com/acp-bridge/acp-bridge",
		Website:      "https://github.com/acp-bridge/acp-bridge#readme",
		Authors:      []string{"The acp-bridge authors"},
		Distribution: Distribution{Binary: map[string]Binary{}},
	}
	for _, p := range All {
		a.Distribution.Binary[p.RegistryName()] = Binary{
			Archive: strings.TrimRight(download, "/") + "/v" + o.Version + "/" + p.Archive(o.Version),
			Cmd:     "./" + p.exe(),
		}
	}
	return a
}

func main() {
	fl := flag.NewFlagSet("release", flag.ExitOnError)
	platforms := fl.String("platforms", "", "comma-separated GOOS/GOARCH to build (default: all six)")
	download := fl.String("download", DefaultDownload, "base URL the archives are published under (ARCHIVE at URL/vVERSION/ARCHIVE)")
	fl.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/release [flags] VERSION OUTDIR")
		fl.PrintDefaults()
	}
	fl.Parse(os.Args[1:])
	if fl.NArg() != 2 {
		fl.Usage()
		os.Exit(2)
	}
	o := Options{Version: strings.TrimPrefix(fl.Arg(0), "v"), Download: *download, Repo: "."}
	if *platforms != "" {
		for _, s := range strings.Split(*platforms, ",") {
			goos, goarch, ok := strings.Cut(strings.TrimSpace(s), "/")
			if !ok {
				fmt.Fprintf(os.Stderr, "release: bad platform %q (want GOOS/GOARCH)\n", s)
				os.Exit(2)
			}
			o.Platforms = append(o.Platforms, Platform{goos, goarch})
		}
	}
	var err error
	if o.Commit, o.Time, err = source(); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	if err := Run(o, fl.Arg(1), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// source is the commit being released and its time (SOURCE_DATE_EPOCH, the
// reproducible-builds convention, overrides the time).
func source() (commit string, t time.Time, err error) {
	out, err := exec.Command("git", "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("git log: %v (run from the repository)", err)
	}
	h, ct, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
		ct = e
	}
	secs, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("bad commit time %q", ct)
	}
	if st, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); len(st) > 0 {
		h += "-dirty"
	}
	return h, time.Unix(secs, 0), nil
}
