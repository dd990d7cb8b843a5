package mapping

import (
	"fmt"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/session"
)

// compaction translates a compaction's events. A client that set
// clientCapabilities.session.compaction gets compaction_update (in_progress,
// then completed, failed or cancelled) with the summary streamed as
// compaction_summary_chunk; any other client reads what happened as agent
// text: a line when it starts, the summary (for /compact) or a line (when
// the agent compacted by itself) when it is done, the reason when it failed.
func (t *Translator) compaction(p session.Compaction) []acp.Update {
	if t.o.Compaction {
		u := acp.CompactionUpdate{CompactionID: p.ID, Status: p.Status, Error: p.Error}
		return []acp.Update{u}
	}
	if t.o.Notices {
		// A client that shows notices but not compactions gets the outcomes
		// that need the user's eye as notices; the progress stays text.
		switch p.Status {
		case session.CompactionFailed:
			return []acp.Update{acp.Notice{Severity: acp.NoticeError, Title: "Compaction failed",
				Description: p.Error + ". The context is unchanged."}}
		case session.CompactionCancelled:
			return []acp.Update{acp.Notice{Severity: acp.NoticeWarning, Title: "Compaction cancelled",
				Description: "The context is unchanged."}}
		}
	}
	var text string
	switch p.Status {
	case session.CompactionInProgress:
		switch p.Reason {
		case session.CompactThreshold:
			text = "\n\n*The context is nearly full: summarising the older part of the conversation…*\n\n"
		case session.CompactOverflow:
			text = "\n\n*The model's context window is full: summarising the older part of the conversation…*\n\n"
		default:
			text = "Compacting the context…\n\n"
		}
	case session.CompactionCompleted:
		if p.Reason == session.CompactManual {
			text = "Compacted the context into this summary:\n\n" + p.Summary
		} else {
			text = fmt.Sprintf("*Summarised %d earlier messages; the last %d stay as they were.*\n\n", p.Replaced, p.Kept)
		}
	case session.CompactionFailed:
		text = "\n\nCompaction failed, the context is unchanged: " + p.Error + "\n\n"
	case session.CompactionCancelled:
		text = "\n\nCompaction cancelled; the context is unchanged.\n\n"
	default:
		return nil
	}
	return []acp.Update{acp.AgentMessageChunk{Content: acp.TextBlock(text)}}
}

// compactionChunk streams the summary to clients that show compactions;
// others see it whole when the compaction is done.
func (t *Translator) compactionChunk(p session.CompactionChunk) []acp.Update {
	if !t.o.Compaction || p.Text == "" {
		return nil
	}
	return []acp.Update{acp.CompactionSummaryChunk{CompactionID: p.ID, Content: acp.TextBlock(p.Text)}}
}
