package credentials

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.deepseek.com":        "https://api.deepseek.com",
		"https://API.DeepSeek.com/":       "https://api.deepseek.com",
		" http://localhost:8080/v1/ ":     "http://localhost:8080/v1",
		"http://h/v1?x=1#f":               "http://h/v1",
		"https://example.com/Path/Keeps/": "https://example.com/Path/Keeps",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSaveLoadRemove(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "conf", "acp-bridge", "credentials.json")}
	if k, err := s.Key("https://api.deepseek.com"); err != nil || k != "" {
		t.Fatalf("empty store: %q, %v", k, err)
	}
	if err := s.Save("https://api.deepseek.com/", "sk-one"); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("http://localhost:1/v1", "sk-two"); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("https://API.deepseek.com", "sk-three"); err != nil { // replaces the first
		t.Fatal(err)
	}
	for url, want := range map[string]string{"https://api.deepseek.com": "sk-three", "http://localhost:1/v1/": "sk-two", "http://other": ""} {
		if got, err := s.Key(url); err != nil || got != want {
			t.Errorf("Key(%s) = %q, %v; want %q", url, got, err, want)
		}
	}
	if runtime.GOOS != "windows" {
		for path, want := range map[string]os.FileMode{s.Path: 0o600, filepath.Dir(s.Path): 0o700} {
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != want {
				t.Errorf("%s: mode %v (%v), want %v", path, st.Mode().Perm(), err, want)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path), ".credentials-*"))
	if len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
	if ok, err := s.Remove(); !ok || err != nil {
		t.Errorf("Remove = %v, %v", ok, err)
	}
	if ok, err := s.Remove(); ok || err != nil {
		t.Errorf("second Remove = %v, %v; want false, nil", ok, err)
	}
	if k, _ := s.Key("http://localhost:1/v1"); k != "" {
		t.Errorf("key after Remove: %q", k)
	}
}

// A damaged file is an error that names the file and never its content.
func TestBrokenFileKeepsKeysSecret(t *testing.T) {
	s := Store{Path: filepath.Join(t.TempDir(), "credentials.json")}
	if err := os.WriteFile(s.Path, []byte(`{"keys": {"https://x": "sk-secret-123"`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Key("https://x")
	if err == nil || !strings.Contains(err.Error(), s.Path) || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("error %v: want one naming the file, without the key", err)
	}
	if err := s.Save("https://x", "k"); err == nil {
		t.Error("Save over a damaged file succeeded: it would drop the other keys")
	}
}

func TestDefaultFollowsXDG(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	if got, want := Default().Path, filepath.Join(dir, "acp-bridge", "credentials.json"); got != want {
		t.Errorf("Default().Path = %q, want %q", got, want)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative") // the spec says: ignore it
	if got := Default().Path; strings.HasPrefix(got, "relative") {
		t.Errorf("a relative XDG_CONFIG_HOME was used: %q", got)
	}
}
