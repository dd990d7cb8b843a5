package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Level says whether a check decides conformance.
type Level string

const (
	Mandatory Level = "mandatory" // a failure makes the agent non-conformant
	Advisory  Level = "advisory"  // reported, never fatal
)

// Status of one check.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Offence is one message that breaks a check.
type Offence struct {
	Run     string `json:"run"`               // which agent process of the suite
	Seq     int    `json:"seq,omitempty"`     // its position in that run's transcript
	Dir     string `json:"dir,omitempty"`     // "client→agent" or "agent→client"
	Message string `json:"message,omitempty"` // the line as it was on the wire
	Why     string `json:"why"`
}

// Result is the outcome of one check.
type Result struct {
	ID          string    `json:"id"`
	Level       Level     `json:"level"`
	Status      Status    `json:"status"`
	Description string    `json:"description"`
	Detail      string    `json:"detail,omitempty"` // why it passed with what, or why it was skipped
	Offences    []Offence `json:"offences,omitempty"`
}

// Report is the suite's verdict on one agent.
type Report struct {
	Agent      []string  `json:"agent"`
	AgentInfo  any       `json:"agentInfo,omitempty"`
	ClientCaps any       `json:"clientCapabilities"`
	Started    time.Time `json:"started"`
	Duration   string    `json:"duration"`
	Conformant bool      `json:"conformant"` // every mandatory check passed or was skipped
	Counts     struct {
		Pass int `json:"pass"`
		Fail int `json:"fail"`
		Skip int `json:"skip"`
	} `json:"counts"`
	Results []Result `json:"results"`
	// Transcripts holds every run's wire traffic when Config.Transcripts is set.
	Transcripts map[string][]string `json:"transcripts,omitempty"`
}

// Result returns the result of check id, if it ran.
func (r *Report) Result(id string) (Result, bool) {
	for _, res := range r.Results {
		if res.ID == id {
			return res, true
		}
	}
	return Result{}, false
}

func (r *Report) finish() {
	r.Conformant = true
	r.Counts.Pass, r.Counts.Fail, r.Counts.Skip = 0, 0, 0
	for _, res := range r.Results {
		switch res.Status {
		case Pass:
			r.Counts.Pass++
		case Fail:
			r.Counts.Fail++
			if res.Level == Mandatory {
				r.Conformant = false
			}
		case Skip:
			r.Counts.Skip++
		}
	}
}

// maxShown bounds the offences printed per check in the text report; the
// JSON report keeps them all.
const maxShown = 5

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ACP conformance: %s\n", strings.Join(r.Agent, " "))
	if r.AgentInfo != nil {
		ai, _ := json.Marshal(r.AgentInfo)
		fmt.Fprintf(&b, "agentInfo: %s\n", ai)
	}
	caps, _ := json.Marshal(r.ClientCaps)
	fmt.Fprintf(&b, "clientCapabilities: %s\n\n", caps)
	for _, res := range r.Results {
		fmt.Fprintf(&b, "%-4s  %-34s %-9s  %s\n", strings.ToUpper(string(res.Status)), res.ID, res.Level, res.Description)
		if res.Detail != "" {
			fmt.Fprintf(&b, "      %s\n", res.Detail)
		}
		for i, o := range res.Offences {
			if i == maxShown {
				fmt.Fprintf(&b, "      … and %d more (see the JSON report)\n", len(res.Offences)-maxShown)
				break
			}
			fmt.Fprintf(&b, "      - [%s", o.Run)
			if o.Seq > 0 {
				fmt.Fprintf(&b, " #%d", o.Seq)
			}
			fmt.Fprintf(&b, "] %s\n", o.Why)
			if o.Message != "" {
				arrow := "←"
				if o.Dir == "client→agent" {
					arrow = "→"
				}
				fmt.Fprintf(&b, "        %s %s\n", arrow, short(o.Message, 400))
			}
		}
	}
	verdict := "CONFORMANT"
	if !r.Conformant {
		verdict = "NOT CONFORMANT"
	}
	fmt.Fprintf(&b, "\n%d passed, %d failed, %d skipped in %s: %s\n", r.Counts.Pass, r.Counts.Fail, r.Counts.Skip, r.Duration, verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
