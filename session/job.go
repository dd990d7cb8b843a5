package session

import "encoding/json"

// Background jobs (internal/jobs): a command the model started to outlive
// its call has a card of its own, live while the job runs, across turns.
// Its events change nothing in the session's state: a job is not a call
// the model waits for, and its output reaches the model only when it asks
// (job_output).
const (
	TypeJobStart  = "job/start"  // JobStart
	TypeJobOutput = "job/output" // JobOutput; transient, never persisted
	TypeJobEnd    = "job/end"    // JobEnd
)

// JobStart opens a job's card: a terminal running Command.
type JobStart struct {
	CardID string          `json:"cardId"`
	Job    string          `json:"job"`  // the job's id, "job-1"
	Tool   string          `json:"tool"` // the tool that started it, whose presenters draw the card
	Args   json.RawMessage `json:"args"` // its arguments, for the card
}

// JobOutput is live output of a job.
type JobOutput struct {
	CardID string `json:"cardId"`
	Data   string `json:"data"`
}

// JobEnd closes a job's card: Status says how it ended ("exit code 0"),
// Meta is the display data the tool's result presenter reads (the output's
// tail, the exit status), stored so a replay shows the ended card.
type JobEnd struct {
	CardID string          `json:"cardId"`
	Job    string          `json:"job"`
	Status string          `json:"status"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

func (JobStart) EventType() string  { return TypeJobStart }
func (JobOutput) EventType() string { return TypeJobOutput }
func (JobEnd) EventType() string    { return TypeJobEnd }
func (JobStart) sealed()            {}
func (JobOutput) sealed()           {}
func (JobEnd) sealed()              {}
