package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkAgent applies the ACP Registry's rules for an agent folder to
// registry/<dir>: agent.json (required fields, id form equal to the folder,
// semver, one binary entry per platform with archive and cmd, URLs carrying
// the version and never "latest", accepted archive formats) and icon.svg
// (16×16, square, monochrome currentColor, no comments).
func checkAgent(dir string) []string {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	b, err := os.ReadFile(filepath.Join(dir, "agent.json"))
	if err != nil {
		return []string{err.Error()}
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return []string{"agent.json: " + err.Error()}
	}
	for _, f := range []string{"id", "name", "version", "description", "distribution"} {
		if v, ok := raw[f]; !ok || v == "" {
			bad("missing required field %s", f)
		}
	}
	var a Agent
	json.Unmarshal(b, &a)
	if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(a.ID) {
		bad("id %q: lowercase letters, digits and hyphens, starting with a letter", a.ID)
	}
	if a.ID != filepath.Base(dir) {
		bad("id %q is not the folder name %q", a.ID, filepath.Base(dir))
	}
	if a.ID == "acp-bridge" {
		bad("id acp-bridge is taken in the registry")
	}
	if !semver.MatchString(a.Version) {
		bad("version %q is not semver", a.Version)
	}
	want := []string{"darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"}
	var got []string
	for p, bin := range a.Distribution.Binary {
		got = append(got, p)
		if bin.Archive == "" || bin.Cmd == "" {
			bad("%s: archive and cmd are both required", p)
		}
		if strings.Contains(strings.ToLower(bin.Archive), "latest") {
			bad("%s: archive URL %s says latest", p, bin.Archive)
		}
		if !strings.Contains(bin.Archive, "/v"+a.Version+"/") || !strings.Contains(filepath.Base(bin.Archive), a.Version) {
			bad("%s: archive URL %s does not carry version %s", p, bin.Archive, a.Version)
		}
		if !strings.HasPrefix(bin.Archive, "https://") {
			bad("%s: archive URL %s is not https", p, bin.Archive)
		}
		ok := false
		for _, ext := range []string{".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2"} {
			ok = ok || strings.HasSuffix(bin.Archive, ext)
		}
		if !ok {
			bad("%s: archive %s is not a format the registry takes", p, bin.Archive)
		}
		if strings.HasPrefix(p, "windows") != strings.HasSuffix(bin.Cmd, ".exe") {
			bad("%s: cmd %s", p, bin.Cmd)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		bad("platforms %v, want one entry each for %v", got, want)
	}
	errs = append(errs, checkIcon(filepath.Join(dir, "icon.svg"))...)
	return errs
}

func checkIcon(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	var errs []string
	if bytes.Contains(b, []byte("<!--")) {
		errs = append(errs, "icon has comments")
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	root, current := true, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(errs, "icon is not XML: "+err.Error())
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attr := map[string]string{}
		for _, at := range el.Attr {
			attr[at.Name.Local] = at.Value
		}
		if root {
			root = false
			if el.Name.Local != "svg" {
				errs = append(errs, "icon root is <"+el.Name.Local+">")
			}
			if attr["width"] != "16" || attr["height"] != "16" || attr["viewBox"] != "0 0 16 16" {
				errs = append(errs, fmt.Sprintf("icon is %sx%s (viewBox %q), want 16x16", attr["width"], attr["height"], attr["viewBox"]))
			}
		}
		for _, k := range []string{"fill", "stroke", "color", "stop-color"} {
			v, ok := attr[k]
			switch lv := strings.ToLower(strings.TrimSpace(v)); {
			case !ok:
			case lv == "currentcolor":
				current = true
			case lv != "none" && lv != "inherit":
				errs = append(errs, fmt.Sprintf("icon has %s=%q: monochrome icons use currentColor", k, v))
			}
		}
		if s := attr["style"]; strings.Contains(s, "#") || strings.Contains(s, "rgb") {
			errs = append(errs, "icon style holds a colour")
		}
		if el.Name.Local == "style" {
			errs = append(errs, "icon has a <style> element")
		}
	}
	if !current {
		errs = append(errs, "icon does not use currentColor")
	}
	return errs
}

// TestCheckAgentCatches: the checker refuses manifests that break each
// rule, so a pass means something.
func TestCheckAgentCatches(t *testing.T) {
	o := Options{Version: "1.2.3"}
	tests := []struct {
		name   string
		folder string
		edit   func(a *Agent)
		icon   string
		want   string
	}{
		{name: "valid", folder: ID},
		{name: "folder differs", folder: "other", want: "not the folder name"},
		{name: "taken id", folder: "acp-bridge", edit: func(a *Agent) { a.ID = "acp-bridge" }, want: "taken"},
		{name: "upper-case id", folder: "ACP", edit: func(a *Agent) { a.ID = "ACP" }, want: "lowercase"},
		{name: "not semver", folder: ID, edit: func(a *Agent) { a.Version = "1.2" }, want: "not semver"},
		{name: "latest", folder: ID, edit: func(a *Agent) {
			b := a.Distribution.Binary["linux-x86_64"]
			b.Archive = strings.Replace(b.Archive, "v1.2.3", "latest", 1)
			a.Distribution.Binary["linux-x86_64"] = b
		}, want: "latest"},
		{name: "platform missing", folder: ID, edit: func(a *Agent) { delete(a.Distribution.Binary, "darwin-aarch64") }, want: "one entry each"},
		{name: "no cmd", folder: ID, edit: func(a *Agent) {
			b := a.Distribution.Binary["windows-aarch64"]
			b.Cmd = ""
			a.Distribution.Binary["windows-aarch64"] = b
		}, want: "both required"},
		{name: "installer", folder: ID, edit: func(a *Agent) {
			b := a.Distribution.Binary["darwin-x86_64"]
			b.Archive = strings.TrimSuffix(b.Archive, ".tar.gz") + ".dmg"
			a.Distribution.Binary["darwin-x86_64"] = b
		}, want: "not a format"},
		{name: "coloured icon", folder: ID, icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path fill="#f00" d="M0 0h16v16z"/></svg>`, want: "currentColor"},
		{name: "big icon", folder: ID, icon: `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32" fill="currentColor"><path d="M0 0h16v16z"/></svg>`, want: "want 16x16"},
		{name: "icon comment", folder: ID, icon: `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" fill="currentColor"><!-- x --><path d="M0 0h16v16z"/></svg>`, want: "comments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tt.folder)
			os.MkdirAll(dir, 0o755)
			a := Manifest(o)
			if tt.edit != nil {
				tt.edit(&a)
			}
			b, _ := json.Marshal(a)
			os.WriteFile(filepath.Join(dir, "agent.json"), b, 0o644)
			ic := icon
			if tt.icon != "" {
				ic = []byte(tt.icon)
			}
			os.WriteFile(filepath.Join(dir, "icon.svg"), ic, 0o644)
			errs := checkAgent(dir)
			joined := strings.Join(errs, "; ")
			switch {
			case tt.want == "" && len(errs) > 0:
				t.Errorf("valid manifest refused: %s", joined)
			case tt.want != "" && !strings.Contains(joined, tt.want):
				t.Errorf("errors %q lack %q", joined, tt.want)
			}
		})
	}
}

// fakeBuild stands in for the compiler: a binary whose bytes name the
// platform and the stamps.
func fakeBuild(o Options, p Platform, bin string) error {
	return os.WriteFile(bin, []byte("binary "+p.GOOS+"/"+p.GOARCH+" "+o.Version+" "+o.Commit), 0o755)
}

// TestReleaseIsReproducibleAndValid runs the whole release for all six
// platforms twice (with a stand-in compiler): the outputs are
// byte-identical, the sums match, the archives hold the binary where the
// manifest's cmd says, and the manifest passes the registry's rules.
func TestReleaseIsReproducibleAndValid(t *testing.T) {
	o := Options{Version: "1.2.3-rc.1", Commit: "0123456789abcdef", Time: time.Unix(1764700000, 0), Repo: "../..", Build: fakeBuild}
	var outs [2]string
	for i := range outs {
		outs[i] = t.TempDir()
		if err := Run(o, outs[i], io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	wantFiles := []string{"SHA256SUMS", filepath.Join("registry", ID, "agent.json"), filepath.Join("registry", ID, "icon.svg")}
	for _, p := range All {
		wantFiles = append(wantFiles, p.Archive(o.Version))
	}
	compareTrees(t, outs[0], outs[1], wantFiles)
	if errs := checkAgent(filepath.Join(outs[0], "registry", ID)); len(errs) > 0 {
		t.Errorf("the manifest breaks the registry's rules:\n%s", strings.Join(errs, "\n"))
	}
	sumCheck(t, outs[0])
	// Each archive holds the binary at the manifest's cmd.
	a := Manifest(o)
	for _, p := range All {
		cmd := strings.TrimPrefix(a.Distribution.Binary[p.RegistryName()].Cmd, "./")
		path := filepath.Join(outs[0], p.Archive(o.Version))
		var got []byte
		if p.GOOS == "windows" {
			got = unzip(t, path, cmd)
		} else {
			got, _ = os.ReadFile(extractTar(t, path, cmd, t.TempDir()))
		}
		if want := "binary " + p.GOOS + "/" + p.GOARCH; !strings.HasPrefix(string(got), want) {
			t.Errorf("%s: %s holds %q, want %q", path, cmd, got, want)
		}
	}
}

// TestReleaseBuildsRealBinary builds the host platform's archive twice
// with the real compiler: identical bytes, and the binary in it reports the
// version and commit. A -trimpath build shares no cache with ordinary ones,
// so a cold run compiles everything (minutes on a busy machine): it runs
// when ACP_BRIDGE_RELEASE_BUILD=1 asks for it.
func TestReleaseBuildsRealBinary(t *testing.T) {
	if os.Getenv("ACP_BRIDGE_RELEASE_BUILD") != "1" || testing.Short() {
		t.Skip("compiles acp-bridge twice; set ACP_BRIDGE_RELEASE_BUILD=1 to run it")
	}
	host := Platform{"linux", "amd64"}
	if out, err := exec.Command("go", "env", "GOOS", "GOARCH").Output(); err == nil {
		f := strings.Fields(string(out))
		host = Platform{f[0], f[1]}
	}
	o := Options{Version: "1.2.3", Commit: "0123456789abcdef", Time: time.Unix(1764700000, 0), Repo: "../..", Platforms: []Platform{host}}
	var outs [2]string
	for i := range outs {
		outs[i] = t.TempDir()
		if err := Run(o, outs[i], io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	compareTrees(t, outs[0], outs[1], []string{"SHA256SUMS", filepath.Join("registry", ID, "agent.json"), filepath.Join("registry", ID, "icon.svg"), host.Archive(o.Version)})
	archive := filepath.Join(outs[0], host.Archive(o.Version))
	var bin string
	if host.GOOS == "windows" {
		bin = filepath.Join(t.TempDir(), host.exe())
		os.WriteFile(bin, unzip(t, archive, host.exe()), 0o755)
	} else {
		bin = extractTar(t, archive, host.exe(), t.TempDir())
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || strings.TrimSpace(string(out)) != "acp-bridge 1.2.3 (commit 0123456789ab)" {
		t.Errorf("--version: %q, %v", out, err)
	}
}

// compareTrees checks that a and b hold exactly want, with the same bytes.
func compareTrees(t *testing.T, a, b string, want []string) {
	t.Helper()
	for _, out := range []string{a, b} {
		var got []string
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(out, p)
				got = append(got, rel)
			}
			return nil
		})
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s holds %v, want %v", out, got, want)
		}
	}
	for _, f := range want {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// sumCheck verifies SHA256SUMS the way a user does, when sha256sum is here.
func sumCheck(t *testing.T, dir string) {
	t.Helper()
	sh, err := exec.LookPath("sha256sum")
	if err != nil {
		return
	}
	cmd := exec.Command(sh, "-c", "SHA256SUMS")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
}

func unzip(t *testing.T, archive, name string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == name {
			if f.Mode()&0o111 == 0 {
				t.Errorf("%s: %s is not executable (%v)", archive, name, f.Mode())
			}
			r, _ := f.Open()
			defer r.Close()
			b, _ := io.ReadAll(r)
			return b
		}
	}
	t.Fatalf("%s not in %s", name, archive)
	return nil
}

// extractTar writes name out of a .tar.gz into dir and returns its path.
func extractTar(t *testing.T, archive, name, dir string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in %s: %v", name, archive, err)
		}
		if h.Name != name {
			continue
		}
		if h.Mode&0o111 == 0 || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: mode %o uid %d uname %q", name, h.Mode, h.Uid, h.Uname)
		}
		p := filepath.Join(dir, name)
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
