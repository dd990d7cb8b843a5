package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/sysprompt"
)

// cmdInit writes a starter AGENTS.md at the workspace root. The file goes
// through the write tool as a call of its own, so the user sees the card
// and its diff and answers the normal permission prompt before anything is
// written. The model is not involved: the starter comes from the files
// (sysprompt.Starter), and the call is not part of the model's context.
// The new file takes effect in the next session (this one's prompt is fixed).
func cmdInit(ctx context.Context, s *commandEnv, _ string) acp.StopReason {
	path := filepath.Join(s.cwd, sysprompt.InstructionsFile)
	if _, err := os.Stat(path); err == nil {
		s.notice(ctx, fmt.Sprintf("`%s` already exists; edit it, or remove it and run `/init` again.", path))
		return acp.StopEndTurn
	} else if !errors.Is(err, fs.ErrNotExist) {
		s.notice(ctx, fmt.Sprintf("Cannot tell whether `%s` exists: %v", path, err))
		return acp.StopEndTurn
	}
	if _, err := s.scope.Resolve("write"); err != nil {
		// No write tool, or (tools mode code) one only run_code may call.
		s.notice(ctx, fmt.Sprintf("`/init` writes through the write tool, which this session cannot call directly: %v", err))
		return acp.StopEndTurn
	}
	args, _ := json.Marshal(map[string]string{"file_path": path, "content": sysprompt.Starter(s.cwd)})
	res := s.call(ctx, "init", "write", args)
	switch {
	case ctx.Err() != nil:
		return acp.StopCancelled
	case res.IsError:
		s.notice(ctx, fmt.Sprintf("No AGENTS.md was written: %s", res.Text()))
	default:
		s.notice(ctx, fmt.Sprintf("Wrote a starter `%s`: fill in what it leaves open. Agents read it from the next session on.", path))
	}
	return acp.StopEndTurn
}
