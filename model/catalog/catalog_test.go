package catalog

import (
	"testing"

	"github.com/acp-bridge/acp-bridge/model"
	"github.com/google/go-cmp/cmp"
)

func TestCatalog(t *testing.T) {
	lone := &model.Script{}
	a, b, c := Choice{ID: "p/a"}, Choice{ID: "p/b", Images: true}, Choice{ID: "p/c"}
	ids := func(cs []Choice) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tt := range []struct {
		name      string
		cat       Catalog
		models    []string
		def       string // Default("p/b")
		anyImages bool
	}{
		{"none", Catalog{}, nil, "", false},
		{"fixed", Catalog{Fixed: []Choice{a, b}}, []string{"p/a", "p/b"}, "p/b", true},
		{"fixed, default not offered", Catalog{Fixed: []Choice{a}}, []string{"p/a"}, "p/a", false},
		{"fixed and more", Catalog{Fixed: []Choice{a}, More: func() []Choice { return []Choice{c} }}, []string{"p/a", "p/c"}, "p/a", false},
		{"lone", Catalog{Lone: lone}, []string{"default"}, "default", false},
		{"lone named", Catalog{Lone: lone, LoneName: "mine"}, []string{"mine"}, "mine", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.models, ids(tt.cat.Models())); diff != "" {
				t.Errorf("Models (-want +got):\n%s", diff)
			}
			if got := tt.cat.Default("p/b"); got != tt.def {
				t.Errorf("Default = %q, want %q", got, tt.def)
			}
			if got := tt.cat.AnyImages(); got != tt.anyImages {
				t.Errorf("AnyImages = %v", got)
			}
			for _, id := range tt.models {
				if f := tt.cat.Find(id); f == nil || f.ID != id {
					t.Errorf("Find(%q) = %v", id, f)
				}
			}
			if f := tt.cat.Find("nope"); f != nil {
				t.Errorf("Find(nope) = %v", f)
			}
		})
	}
}

func TestWindowAndCost(t *testing.T) {
	for _, tt := range []struct {
		c        *Choice
		reported int
		want     int
	}{
		{nil, 0, DefaultContextWindow},
		{nil, 64000, 64000},
		{&Choice{ContextWindow: 32000}, 64000, 32000},
		{&Choice{}, 0, DefaultContextWindow},
	} {
		if got := Window(tt.c, tt.reported); got != tt.want {
			t.Errorf("Window(%+v, %d) = %d, want %d", tt.c, tt.reported, got, tt.want)
		}
	}
	p := &Price{Input: 2, CachedInput: 0.5, Output: 8}
	u := &model.Usage{InputTokens: 1_000_000, CachedTokens: 400_000, OutputTokens: 500_000}
	if got, want := p.Cost(u), 0.6*2+0.4*0.5+0.5*8; got != want {
		t.Errorf("Cost = %v, want %v", got, want)
	}
	if got := (&Price{Input: 1}).Cost(&model.Usage{InputTokens: 2_000_000, CachedTokens: 1_000_000}); got != 2 {
		t.Errorf("cached input without its own price costs %v, want 2", got)
	}
	if (&Price{}).CurrencyOf() != "USD" || (&Price{Currency: "EUR"}).CurrencyOf() != "EUR" {
		t.Error("CurrencyOf")
	}
}
