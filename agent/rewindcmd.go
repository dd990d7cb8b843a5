package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// /rewind and /undo: rewind in every client, whether or not it has a
// button for it (rewind.go). /rewind lists the recent prompts; /rewind N
// takes back prompt N and everything after it, the conversation and the
// files; /rewind N conversation keeps the files; /undo takes back the last
// prompt.

// rewindListed is how many recent prompts /rewind lists.
const rewindListed = 10

// prompts are the user messages that reached the model (numbered from 1
// in the conversation), and the seq of the command's own message (the
// last one).
func (r *rewinder) prompts() ([]promptMark, int64) {
	marks := r.marks()
	var self int64
	if n := len(marks); n > 0 {
		self = marks[n-1].seq
		marks = marks[:n-1]
	}
	return slices.DeleteFunc(marks, func(m promptMark) bool { return !m.entered }), self
}

func cmdUndo(ctx context.Context, s *commandEnv, arg string) acp.StopReason {
	ps, _ := s.rewind.prompts()
	if len(ps) == 0 {
		s.notice(ctx, "Nothing to undo: no prompt of this conversation has reached the model.")
		return acp.StopEndTurn
	}
	return cmdRewind(ctx, s, strings.TrimSpace(strconv.Itoa(len(ps))+" "+arg))
}

func cmdRewind(ctx context.Context, s *commandEnv, arg string) acp.StopReason {
	r := s.rewind
	ps, self := r.prompts()
	fields := strings.Fields(arg)
	if len(fields) == 0 {
		s.notice(ctx, r.list(ps))
		return acp.StopEndTurn
	}
	n, err := strconv.Atoi(fields[0])
	keepFiles := len(fields) == 2 && fields[1] == "conversation"
	if err != nil || n < 1 || n > len(ps) || len(fields) > 2 || len(fields) == 2 && !keepFiles {
		s.notice(ctx, fmt.Sprintf("Usage: `/rewind` lists the prompts; `/rewind N` takes back prompt N (1 to %d) and everything after it, files included; `/rewind N conversation` keeps the files.", len(ps)))
		return acp.StopEndTurn
	}
	m := ps[n-1]
	var plan filePlan
	if !keepFiles {
		plan = r.restoreFiles(ctx, r.planFilesFor(ctx, m.seq))
	}
	report := r.report(n, m, plan, keepFiles)
	if err := r.rewindTo(ctx, session.Rewind{Before: m.seq, Until: self, Via: "/rewind"}); err != nil {
		report += fmt.Sprintf("\n\nThe rewind could not be saved (%v): it holds in this window, but a reload would show the rewound messages again.", err)
	}
	s.notice(ctx, report)
	return acp.StopEndTurn
}

// list is /rewind's answer without a number: the recent prompts.
func (r *rewinder) list(ps []promptMark) string {
	if len(ps) == 0 {
		return "Nothing to rewind: no prompt of this conversation has reached the model."
	}
	var b strings.Builder
	b.WriteString("Prompts you can rewind to before (`/rewind N` takes back prompt N and everything after it, files included; `/rewind N conversation` keeps the files; `/undo` takes back the last):\n")
	for i := max(0, len(ps)-rewindListed); i < len(ps); i++ {
		fmt.Fprintf(&b, "\n%d. %s", i+1, quoted(ps[i]))
		if files := r.pending(ps[i].seq); len(files) > 0 {
			fmt.Fprintf(&b, " (files changed after it: %s)", strings.Join(r.rel(files), ", "))
		}
	}
	if len(ps) > rewindListed {
		fmt.Fprintf(&b, "\n\n(%d earlier prompts are not rewindListed.)", len(ps)-rewindListed)
	}
	return b.String()
}

// report is what /rewind N did.
func (r *rewinder) report(n int, m promptMark, plan filePlan, keepFiles bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rewound to before prompt %d (%s): the model no longer sees it or anything after it. "+
		"Your editor's transcript still shows those messages (the agent cannot take them off your screen), but the model does not see them.", n, quoted(m))
	if keepFiles {
		b.WriteString("\n\nThe files were left as they are (`conversation`).")
		return b.String()
	}
	if len(plan.restore) == 0 && len(plan.left) == 0 {
		b.WriteString("\n\nThe agent changed no files after that prompt.")
	}
	if len(plan.restore) > 0 {
		fmt.Fprintf(&b, "\n\nFiles put back as they were before that prompt (%d):", len(plan.restore))
		for _, f := range plan.restore {
			if f.removed {
				fmt.Fprintf(&b, "\n- %s (removed: the agent had created it)", r.relOne(f.path))
			} else {
				fmt.Fprintf(&b, "\n- %s", r.relOne(f.path))
			}
		}
	}
	if len(plan.left) > 0 {
		fmt.Fprintf(&b, "\n\nFiles left as they are (%d):", len(plan.left))
		for _, f := range plan.left {
			fmt.Fprintf(&b, "\n- %s: %s", r.relOne(f.Path), f.Reason)
		}
	}
	if len(plan.commands) > 0 {
		fmt.Fprintf(&b, "\n\nNot undone: what these commands did after that prompt stays (a rewind puts back only the agent's own file edits):")
		for _, c := range plan.commands {
			fmt.Fprintf(&b, "\n- `%s`", c)
		}
	}
	return b.String()
}

func quoted(m promptMark) string {
	return strconv.Quote(firstLine(m.msg.Text, 60))
}

func (r *rewinder) rel(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = r.relOne(p)
	}
	return out
}

// relOne is p relative to the session's cwd when it lies inside it, else
// p. filepath.IsLocal, not a ".." prefix: a file named "..foo" is inside.
func (r *rewinder) relOne(p string) string {
	if rel, err := filepath.Rel(r.cwd, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return p
}

// pending are the files the agent changed after the user message at
// before and did not put back since.
func (r *rewinder) pending(before int64) []string {
	changes, _ := changesAfter(r.events(), before)
	out := make([]string, 0, len(changes))
	for p := range changes {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
