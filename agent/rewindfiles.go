package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	iofs "io/fs"
	"os"
	"slices"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/diffs"
	"github.com/acp-bridge/acp-bridge/registry"
	"github.com/acp-bridge/acp-bridge/session"
)

// Files back: what the agent's own tools changed after a user message is
// taken back from what the log recorded. Every successful write or edit
// (a direct call, a Code Mode sub-call, a subagent's) logs with its result
// the file's content before and after by hash, and the hunks it applied
// (diffs.Undo, tools/fs): reverting the hunks on the content the tool left
// gives the content before, checked against its hash. A file is put back
// only while it is exactly as the agent left it; one changed since (by the
// user, a command, another session) is left and named. A file the agent
// created is removed. What commands did is not undone: the commands that
// ran after the message are named. The restore is logged
// (session.FilesRestored, with the content it left by hash), so a second
// rewind or a reload knows the files as the rewind left them.

// fileChange is one change the agent's tools made to a file.
type fileChange struct {
	seq   int64 // of its tool result
	undo  diffs.Undo
	hunks []registry.FileDiff
	// unrecorded: the result has the hunks but no undo record (a bridge
	// older than rewinds logged it): it cannot be taken back.
	unrecorded bool
}

// fileAction is what the log says the agent did to a file: a change, or
// a restore that left it so (a hash, or removed).
type fileAction struct {
	seq      int64
	change   *fileChange
	restored *session.FileRestored
}

// filePlan is what a rewind to before the user message at before does to
// the files: those it puts back, those it leaves and why, and the commands
// it cannot undo.
type filePlan struct {
	before   int64
	restore  []fileRestore
	left     []session.FileLeft
	commands []string
}

// fileRestore is one file put back: content, or removed.
type fileRestore struct {
	path    string
	removed bool
	content string
	undid   []int64
}

// fileReader reads a file as it is now; exists is false when there is none.
type fileReader func(path string) (content string, exists bool, err error)

// Why a file is left.
const (
	leftChanged    = "it changed since the agent left it (by you, a command or another session), so it was left as it is"
	leftBetween    = "it was changed between the agent's own changes (by a command or outside the agent), so its earlier content cannot be known"
	leftUnknown    = "the log cannot give its earlier content back exactly"
	leftUnrecorded = "an older acp-bridge logged the agent's change to it without what a rewind needs, so it was left as it is"
)

// changesAfter are the files the agent's tools changed after the user
// message at before and not put back since, by path (tool result order),
// and the actions on each file since that message. What the log holds
// from before it cannot matter: a file with a change since has that
// change, or a restore after it, as its last action, and a restore undid
// only changes older than itself.
func changesAfter(evs []session.Event, before int64) (pending map[string][]fileChange, actions map[string][]fileAction) {
	pending, actions = map[string][]fileChange{}, map[string][]fileAction{}
	undone := map[int64]bool{}
	from, _ := slices.BinarySearchFunc(evs, before+1, func(ev session.Event, seq int64) int { return cmp.Compare(ev.Seq, seq) })
	for _, ev := range evs[from:] {
		switch p := ev.Payload.(type) {
		case session.ToolResult:
			c, ok := changeOf(ev.Seq, p.Result)
			if !ok {
				continue
			}
			actions[c.undo.Path] = append(actions[c.undo.Path], fileAction{seq: ev.Seq, change: &c})
		case session.FilesRestored:
			for i := range p.Restored {
				r := &p.Restored[i]
				actions[r.Path] = append(actions[r.Path], fileAction{seq: ev.Seq, restored: r})
				for _, u := range r.Undid {
					undone[u] = true
				}
			}
		}
	}
	for path, as := range actions {
		for _, a := range as {
			if a.change != nil && !undone[a.seq] { // every action is after before (from)
				pending[path] = append(pending[path], *a.change)
			}
		}
	}
	return pending, actions
}

// changeOf reads the change a tool result recorded (tools/fs's result
// meta: undo and diffs), if any.
func changeOf(seq int64, r registry.Result) (fileChange, bool) {
	if r.IsError || len(r.Meta) == 0 || !strings.Contains(string(r.Meta), `"diffs"`) {
		return fileChange{}, false
	}
	var m struct {
		Undo  *diffs.Undo         `json:"undo"`
		Diffs []registry.FileDiff `json:"diffs"`
	}
	switch {
	case json.Unmarshal(r.Meta, &m) != nil:
		return fileChange{}, false
	case m.Undo == nil && len(m.Diffs) > 0 && m.Diffs[0].Path != "":
		return fileChange{seq: seq, undo: diffs.Undo{Path: m.Diffs[0].Path}, hunks: m.Diffs, unrecorded: true}, true
	case m.Undo == nil || m.Undo.Path == "":
		return fileChange{}, false
	}
	return fileChange{seq: seq, undo: *m.Undo, hunks: m.Diffs}, true
}

// planFiles decides what a rewind to before the user message at before
// does to the files, reading each as it is now; nothing is written.
func planFiles(evs []session.Event, before int64, read fileReader, execute func(name string) bool) filePlan {
	plan := filePlan{before: before, commands: commandsAfter(evs, before, execute)}
	pending, actions := changesAfter(evs, before)
	paths := make([]string, 0, len(pending))
	for p := range pending {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		r, why := restoreOne(path, pending[path], actions[path], read)
		if why != "" {
			plan.left = append(plan.left, session.FileLeft{Path: path, Reason: why})
			continue
		}
		plan.restore = append(plan.restore, r)
	}
	return plan
}

// restoreOne walks one file's changes back, newest first, from its content
// now; why says why it is left instead.
func restoreOne(path string, changes []fileChange, actions []fileAction, read fileReader) (fileRestore, string) {
	if slices.ContainsFunc(changes, func(c fileChange) bool { return c.unrecorded }) {
		return fileRestore{}, leftUnrecorded
	}
	cur, exists, err := read(path)
	if err != nil {
		return fileRestore{}, "it could not be read: " + err.Error()
	}
	// What the agent last left there: a change's content, or a restore's.
	last := actions[len(actions)-1]
	switch {
	case last.change != nil && (!exists || diffs.Hash(cur) != last.change.undo.After),
		last.restored != nil && last.restored.Removed && exists,
		last.restored != nil && !last.restored.Removed && (!exists || diffs.Hash(cur) != last.restored.Hash):
		return fileRestore{}, leftChanged
	}
	r := fileRestore{path: path}
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		if !exists || diffs.Hash(cur) != c.undo.After {
			return fileRestore{}, leftBetween
		}
		if c.undo.Created {
			cur, exists = "", false
		} else if cur, exists = c.undo.Text(cur, c.hunks); !exists {
			return fileRestore{}, leftUnknown
		}
		r.undid = append(r.undid, c.seq)
	}
	r.removed, r.content = !exists, cur
	return r, ""
}

// commandsAfter names the commands (tools that execute) run after the user
// message at before: what they did stays.
func commandsAfter(evs []session.Event, before int64, execute func(name string) bool) []string {
	var out []string
	for _, ev := range evs {
		c, ok := ev.Payload.(session.ToolCall)
		if !ok || ev.Seq <= before || !execute(c.Name) {
			continue
		}
		var a struct {
			Command string `json:"command"`
		}
		what := c.Name
		if json.Unmarshal(c.Args, &a) == nil && a.Command != "" {
			what = firstLine(a.Command, 100)
		}
		out = append(out, what)
	}
	return out
}

// firstLine is s's first line, at most n runes.
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	} else if cut {
		return s + " …"
	}
	return s
}

// planFilesFor is the plan of this session's files for a rewind to before
// the user message at before.
func (r *rewinder) planFilesFor(ctx context.Context, before int64) filePlan {
	read := func(path string) (string, bool, error) {
		if _, err := os.Stat(path); errors.Is(err, iofs.ErrNotExist) {
			return "", false, nil
		} else if err != nil {
			return "", false, err
		}
		c, err := r.files.ReadText(ctx, path)
		return c, err == nil, err
	}
	execute := func(name string) bool {
		d := r.scope.Get(name)
		return d != nil && d.Facts.Kind == "execute"
	}
	return planFiles(r.events(), before, read, execute)
}

// restoreFiles carries a plan out and logs what it did; a file that cannot
// be written or removed now joins the ones left.
func (r *rewinder) restoreFiles(ctx context.Context, plan filePlan) filePlan {
	done := session.FilesRestored{Before: plan.before, Left: plan.left}
	var restored []fileRestore
	for _, f := range plan.restore {
		rec := session.FileRestored{Path: f.path, Removed: f.removed, Undid: f.undid}
		var err error
		if f.removed {
			err = os.Remove(f.path)
		} else if err = r.files.WriteText(ctx, f.path, f.content); err == nil {
			saved := f.content
			if back, rerr := r.files.ReadText(ctx, f.path); rerr == nil {
				saved = back // the editor may format it as it saves
			}
			rec.Hash = diffs.Hash(saved)
		}
		if err != nil {
			done.Left = append(done.Left, session.FileLeft{Path: f.path, Reason: "putting it back failed: " + err.Error()})
			continue
		}
		done.Restored = append(done.Restored, rec)
		restored = append(restored, f)
	}
	if len(done.Restored) > 0 || len(done.Left) > 0 {
		r.emit(ctx, session.New(done))
	}
	plan.restore, plan.left = restored, done.Left
	return plan
}

// RewindFiles serves `_session/rewind_files`: the files the agent's tools
// changed after the user message named go back to how they were when it
// arrived (DryRun: only say what would happen). The conversation is not
// touched.
func (a *Agent) RewindFiles(ctx context.Context, req *acp.RewindFilesRequest) (*acp.RewindFilesResponse, error) {
	if err := req.BeforeMessage.Check("beforeMessage"); err != nil {
		return nil, err
	}
	s, err := a.session(req.SessionID)
	if err != nil {
		return &acp.RewindFilesResponse{Reason: rewindNoSuch, DryRun: req.DryRun}, nil
	}
	if !s.holdTurn() {
		return &acp.RewindFilesResponse{Reason: rewindBusy, DryRun: req.DryRun}, nil
	}
	defer s.releaseTurn()
	m, err := s.rw.findPrompt(req.BeforeMessage, "beforeMessage")
	if err != nil {
		return nil, err
	}
	plan := s.rw.planFilesFor(ctx, m.seq)
	if !req.DryRun {
		plan = s.rw.restoreFiles(ctx, plan)
		a.log.Info("session files rewound", "session", s.id, "before", m.seq, "restored", len(plan.restore), "left", len(plan.left))
	}
	return plan.response(req.DryRun), nil
}

// response is the plan as `_session/rewind_files` answers it.
func (p filePlan) response(dry bool) *acp.RewindFilesResponse {
	resp := &acp.RewindFilesResponse{CanRewind: len(p.restore) > 0, DryRun: dry,
		Restored: []acp.RestoredFile{}, Left: []acp.LeftFile{}, Commands: p.commands}
	if resp.Commands == nil {
		resp.Commands = []string{}
	}
	for _, r := range p.restore {
		resp.Restored = append(resp.Restored, acp.RestoredFile{Path: r.path, Removed: r.removed})
	}
	for _, l := range p.left {
		resp.Left = append(resp.Left, acp.LeftFile{Path: l.Path, Reason: l.Reason})
	}
	switch {
	case resp.CanRewind:
	case len(p.left) > 0:
		resp.Reason = "files_changed" // every file changed since: none can be put back
	default:
		resp.Reason = "nothing_to_restore"
	}
	return resp
}
