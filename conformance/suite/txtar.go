package suite

import "golang.org/x/tools/txtar"

// Archive is a txtar archive (golang.org/x/tools/txtar): a free-text
// comment, then files, each introduced by a line "-- name --"; with the
// lookups a scenario needs.
type Archive struct{ txtar.Archive }

// ParseArchive reads a txtar archive. It never fails: text before the
// first marker is the comment.
func ParseArchive(data []byte) *Archive { return &Archive{*txtar.Parse(data)} }

// Format writes the archive back; every section ends with a newline.
func (a *Archive) Format() []byte { return txtar.Format(&a.Archive) }

// File returns the named file's data.
func (a *Archive) File(name string) ([]byte, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Set replaces the named file, or appends it.
func (a *Archive) Set(name string, data []byte) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data = data
			return
		}
	}
	a.Files = append(a.Files, txtar.File{Name: name, Data: data})
}
