package agent

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/acp-bridge/acp-bridge/acp"
	"github.com/acp-bridge/acp-bridge/rules"
)

// cmdPermissions lists the permission rules in effect, where each comes
// from, the hooks and the project settings' trust; `/permissions remove N`
// (or the rule's text) forgets a remembered rule.
func cmdPermissions(ctx context.Context, s *commandEnv, arg string) acp.StopReason {
	s.policy.reload(ctx)
	v := s.policy.current()
	list := orderedRules(v.rules)
	if rest, ok := strings.CutPrefix(arg, "remove"); ok && (rest == "" || rest[0] == ' ') {
		s.notice(ctx, removeRule(ctx, s, list, v.outside, strings.TrimSpace(rest)))
		return acp.StopEndTurn
	}
	if arg != "" {
		s.notice(ctx, "Usage: `/permissions` lists the rules in effect; `/permissions remove N` forgets remembered rule N.")
		return acp.StopEndTurn
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Permission mode **%s**. ", s.ctl.mode())
	if len(list) == 0 {
		b.WriteString("No permission rules are in effect.")
	} else {
		b.WriteString("Rules in effect (deny wins over ask, ask over allow, in every mode):\n")
		for i, r := range list {
			fmt.Fprintf(&b, "\n%d. %s `%s` (%s)", i+1, r.Effect, r.Text, r.Source)
		}
	}
	if len(v.outside) > 0 {
		b.WriteString("\n\nCommands that run outside the sandbox (an \"always\" answer when the sandbox refused one):\n")
		for i, r := range v.outside {
			fmt.Fprintf(&b, "\n%d. `%s` (%s)", len(list)+i+1, r.Text, r.Source)
		}
	}
	if hs := v.hooks; len(hs) > 0 {
		b.WriteString("\n\nHooks in effect:\n")
		for _, h := range hs {
			m := ""
			if h.Matcher != "" {
				m = " for `" + h.Matcher + "`"
			}
			fmt.Fprintf(&b, "\n- %s%s (%s)", h.Name(), m, h.From)
		}
	}
	if p := v.project; p.Path != "" {
		switch {
		case v.trusted:
			fmt.Fprintf(&b, "\n\nProject settings %s: in effect.", p.Path)
		case s.policy.store == nil:
			fmt.Fprintf(&b, "\n\nProject settings %s: only its deny and ask rules apply (this bridge keeps no project memory, so its allow rules and hooks cannot be trusted).", p.Path)
		default:
			fmt.Fprintf(&b, "\n\nProject settings %s: its deny and ask rules apply; its allow rules and hooks wait for your trust (asked at the next prompt).", p.Path)
		}
	}
	if len(list)+len(v.outside) > 0 {
		b.WriteString("\n\n`/permissions remove N` forgets remembered rule N; the others are removed by editing the file named.")
	}
	s.notice(ctx, b.String())
	return acp.StopEndTurn
}

// orderedRules lists rules as they take effect: deny, ask, allow.
func orderedRules(rs rules.Set) []rules.Rule {
	var out []rules.Rule
	for _, e := range []rules.Effect{rules.Deny, rules.Ask, rules.Allow} {
		for _, r := range rs {
			if r.Effect == e {
				out = append(out, r)
			}
		}
	}
	return out
}

func removeRule(ctx context.Context, s *commandEnv, list, outside []rules.Rule, which string) string {
	if which == "" {
		return "Name the rule to remove: `/permissions remove N`, N from `/permissions`."
	}
	all := append(slices.Clip(list), outside...)
	at := -1
	if n, err := strconv.Atoi(which); err == nil {
		if n < 1 || n > len(all) {
			return fmt.Sprintf("There is no rule %d: `/permissions` lists %d.", n, len(all))
		}
		at = n - 1
	} else if at = slices.IndexFunc(all, func(r rules.Rule) bool { return r.Text == which }); at < 0 {
		return fmt.Sprintf("No rule `%s` is in effect.", which)
	}
	r := all[at]
	if r.Source.Kind != "remembered" {
		return fmt.Sprintf("The %s is not one the bridge remembered: remove it from %s.", r, r.Source.Path)
	}
	isOutside := at >= len(list)
	found, err := s.policy.forget(ctx, r.Text, isOutside)
	switch {
	case err != nil:
		return fmt.Sprintf("The rule could not be removed: %v", err)
	case !found:
		return fmt.Sprintf("The rule `%s` was already gone.", r.Text)
	case isOutside:
		return fmt.Sprintf("Removed `%s` from the commands that run outside the sandbox: they run in it again, and a refusal is asked about.", r.Text)
	}
	return fmt.Sprintf("Removed the %s `%s`: calls it allowed ask again.", r.Effect, r.Text)
}
