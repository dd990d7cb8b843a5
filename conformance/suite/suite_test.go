package suite

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/acp-bridge/acp-bridge/conformance/acpschema"
)

func testSchema(t *testing.T) *acpschema.Schema {
	t.Helper()
	s, err := acpschema.Default()
	if err != nil {
		t.Skipf("no ACP schema: %v", err)
	}
	return s
}

func runFake(t *testing.T, f *fakeAgent) *Report {
	t.Helper()
	rep, err := Run(t.Context(), Config{
		Launch: f.launcher(), Agent: []string{"fake"}, Caps: ZedCaps, Schema: testSchema(t),
		Timeout: 5 * time.Second, TurnTimeout: 10 * time.Second,
		CancelAfter: 200 * time.Millisecond, Grace: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSuiteCatchesDefects plants one defect at a time in an otherwise
// conformant agent and expects exactly the check that owns it to fail.
func TestSuiteCatchesDefects(t *testing.T) {
	cases := []struct {
		name  string
		agent fakeAgent
		fails []string // checks that must fail; every other mandatory one must not
	}{
		{"conformant", fakeAgent{}, nil},
		{"stdout noise", fakeAgent{noise: true}, []string{CheckStdout}},
		{"echoes an unsupported version", fakeAgent{echoVersion: true}, []string{CheckInitUnsupported}},
		{"accepts a relative cwd", fakeAgent{acceptRelative: true}, []string{CheckRelativeCwd}},
		{"update after the response", fakeAgent{lateUpdate: true}, []string{CheckUpdatesBefore}},
		{"cancel answered with an error", fakeAgent{cancelError: true}, []string{CheckCancel}},
		{"cancel answered twice", fakeAgent{extraCancelReply: true}, []string{CheckResponses, CheckCancel}},
		{"update for an unknown tool call", fakeAgent{unknownUpdate: true}, []string{CheckKnownID}},
		{"status moves back", fakeAgent{backward: true}, []string{CheckStatusForward}},
		{"fs without the capability", fakeAgent{alwaysFS: true}, []string{CheckCapabilities}},
		{"terminal meta without the capability", fakeAgent{alwaysMeta: true}, []string{CheckTermGated, CheckTermSequence}},
		{"relative diff path", fakeAgent{relativeDiff: true}, []string{CheckPathsAbsolute}},
		{"output after exit", fakeAgent{outputAfterExit: true}, []string{CheckTermSequence}},
		{"replay differs", fakeAgent{badReplay: true}, []string{CheckLoadReplay}},
		{"replayed card status differs", fakeAgent{replayFailed: true}, []string{CheckLoadReplay}},
		{"answers notifications", fakeAgent{answerNotice: true}, []string{CheckUnknownNotif, CheckResponses}},
		{"unknown method succeeds", fakeAgent{unknownMethodOK: true}, []string{CheckUnknownMethod}},
		{"permission without title", fakeAgent{untitledPermission: true}, []string{CheckPermTitle}},
		{"parse errors unanswered", fakeAgent{silentParse: true}, []string{CheckParseError}},
		{"tool_call without title", fakeAgent{badSchema: true}, []string{CheckSchemaAgent}},
		{"notice without being asked", fakeAgent{noticeUnasked: true}, []string{CheckNoticeGated}},
		{"terminal delta without being asked", fakeAgent{deltaUnasked: true}, []string{CheckTermGated}},
		{"fork without the history", fakeAgent{forkEmpty: true}, []string{CheckFork}},
		{"delete of an unknown id fails", fakeAgent{deleteUnknownFails: true}, []string{CheckDeleteUnknown}},
		{"load of a live session refused", fakeAgent{refuseLiveLoad: true}, []string{CheckLoadReplay, CheckFork}},
		{"tool calls without a name", fakeAgent{noName: true}, []string{CheckToolName}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := runFake(t, &tc.agent)
			var text bytes.Buffer
			rep.WriteText(&text)
			for _, d := range Checks {
				res, _ := rep.Result(d.ID)
				want := false
				for _, id := range tc.fails {
					want = want || id == d.ID
				}
				switch {
				case want && res.Status != Fail:
					t.Errorf("%s: %s, want fail", d.ID, res.Status)
				case want && len(res.Offences) == 0:
					t.Errorf("%s failed without an offence", d.ID)
				case !want && res.Level == Mandatory && res.Status == Fail:
					t.Errorf("%s failed: %+v", d.ID, res.Offences)
				}
			}
			wantOK := true
			for _, id := range tc.fails {
				wantOK = wantOK && checkDef(id).Level != Mandatory
			}
			if rep.Conformant != wantOK {
				t.Errorf("conformant = %v, want %v", rep.Conformant, wantOK)
			}
			if t.Failed() {
				t.Log(text.String())
			}
		})
	}
}

// TestConformantFakeExercisesEverything: with a clean agent that advertises
// everything, no check is skipped, so none of them passes vacuously.
func TestConformantFakeExercisesEverything(t *testing.T) {
	rep := runFake(t, &fakeAgent{})
	for _, res := range rep.Results {
		if res.Status != Pass {
			t.Errorf("%s: %s (%s) %+v", res.ID, res.Status, res.Detail, res.Offences)
		}
	}
	if !rep.Conformant {
		t.Error("not conformant")
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"conformant": true`) {
		t.Errorf("JSON report: %v\n%s", err, js.String())
	}
}

// TestLoadSkippedWithoutCapability: load.replay is skipped, not passed,
// for an agent without loadSession.
func TestLoadSkippedWithoutCapability(t *testing.T) {
	rep := runFake(t, &fakeAgent{noLoad: true})
	if res, _ := rep.Result(CheckLoadReplay); res.Status != Skip {
		t.Errorf("load.replay: %s, want skip", res.Status)
	}
	if !rep.Conformant {
		t.Error("a skipped mandatory check made the agent non-conformant")
	}
}

// A client that asks for notices and terminal deltas gets them from the
// fake agent, and the gates let them through: the checks tell asked from
// unasked, not merely "never".
func TestOptInsAreAllowed(t *testing.T) {
	caps := ZedCaps
	caps.Notices, caps.TerminalOutputDelta = true, true
	rep, err := Run(t.Context(), Config{
		Launch: (&fakeAgent{}).launcher(), Agent: []string{"fake"}, Caps: caps, Schema: testSchema(t),
		Timeout: 5 * time.Second, TurnTimeout: 10 * time.Second,
		CancelAfter: 200 * time.Millisecond, Grace: 50 * time.Millisecond, Transcripts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\"sessionUpdate\":\"notice\"`, `terminal_output_delta`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("the transcripts have no %s: the opt-in was not exercised", want)
		}
	}
	for _, id := range []string{CheckNoticeGated, CheckTermGated} {
		if res, _ := rep.Result(id); res.Status != Pass {
			t.Errorf("%s: %s %+v", id, res.Status, res.Offences)
		}
	}
}
