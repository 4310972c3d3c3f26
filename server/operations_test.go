package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestEveryOperationRejectsBadInputAlike walks every catalogue route of
// the OpenAPI document and every MCP tool with bad input: each rule is
// written once (server/op), so a route and a tool that break the same rule
// get the same parameter and the same detail, as a 400 problem and as a
// tool error.
func TestEveryOperationRejectsBadInputAlike(t *testing.T) {
	doc, err := loadOpenAPISpec()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)

	// A query string that cannot be decoded is one rule on every route.
	var detail string
	routes := 0
	for path, item := range doc.Paths.Map() {
		if item.Get == nil || !strings.HasPrefix(path, "/catalog/") {
			continue
		}
		routes++
		target := strings.NewReplacer("{code}", "SV2a", "{cardId}", "jp-SV2a-025", "{number}", "25").Replace(path) + "?a=%zz"
		r := f.get(target)
		r.wantStatus(t, http.StatusBadRequest)
		var p problem
		r.json(t, &p)
		if len(p.Errors) != 1 || p.Errors[0].Parameter != "(query string)" {
			t.Errorf("%s (%s): errors %+v, want one naming the query string", target, item.Get.OperationID, p.Errors)
			continue
		}
		if detail == "" {
			detail = p.Errors[0].Detail
		}
		if p.Errors[0].Detail != detail {
			t.Errorf("%s: detail %q, another route said %q", target, p.Errors[0].Detail, detail)
		}
	}
	if routes != 9 {
		t.Errorf("%d catalogue routes in openapi.yaml, want 9", routes)
	}

	// A path parameter that is not UTF-8 once unescaped is one rule on
	// every route that has one, whichever parameter it is.
	params := map[string]string{"{code}": "SV2a", "{cardId}": "jp-SV2a-025", "{number}": "25"}
	checked := 0
	for path, item := range doc.Paths.Map() {
		if item.Get == nil || !strings.HasPrefix(path, "/catalog/") {
			continue
		}
		for bad := range params {
			if !strings.Contains(path, bad) {
				continue
			}
			checked++
			target := path
			for name, value := range params {
				if name == bad {
					value = "%FF"
				}
				target = strings.ReplaceAll(target, name, value)
			}
			r := f.get(target)
			r.wantStatus(t, http.StatusBadRequest)
			var p problem
			r.json(t, &p)
			name := strings.Trim(bad, "{}")
			if len(p.Errors) != 1 || p.Errors[0].Parameter != name || p.Errors[0].Detail != "must be valid UTF-8" {
				t.Errorf("%s (%s): errors %+v, want one saying %s must be valid UTF-8", target, item.Get.OperationID, p.Errors, name)
			}
		}
	}
	if checked != 4 {
		t.Errorf("%d path parameters of catalogue routes checked, want 4", checked)
	}

	// Every tool with an argument that breaks a rule its REST twin has.
	cases := []struct {
		tool string
		args map[string]any
		rest string // the same rule broken over REST
	}{
		{"list_sets", map[string]any{"zone": "mars"}, "/catalog/search?q=ab&zone=mars"},
		{"list_set_cards", map[string]any{"code": "SV2a", "pageSize": 201}, "/catalog/sets/SV2a/cards?pageSize=201"},
		{"get_card", map[string]any{"cardId": "nope"}, "/catalog/cards/nope"},
		{"get_cards", map[string]any{"id": []string{"a", ""}}, "/catalog/cards?id=a&id="},
		{"get_set_cards_by_number", map[string]any{"code": "SV2a", "number": "  "}, "/catalog/sets/SV2a/cards/%20%20"},
		{"search_cards", map[string]any{"q": "x"}, "/catalog/search?q=x"},
		{"autocomplete_names", map[string]any{"q": "pika", "limit": 21}, "/catalog/autocomplete?q=pika&limit=21"},
	}
	cs := f.mcp(t, "")
	tools := mcpTools(t, cs)
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.tool] = true
		r := f.get(c.rest)
		var p problem
		r.json(t, &p)
		res := callTool(t, cs, c.tool, c.args)
		text := toolTexts(t, res)
		if !res.IsError || len(text) != 1 {
			t.Errorf("%s %v: IsError %v, content %q; want a tool error", c.tool, c.args, res.IsError, text)
			continue
		}
		var want string
		switch r.status {
		case http.StatusBadRequest:
			want = "invalid argument " + p.Errors[0].Parameter + ": " + p.Errors[0].Detail
		case http.StatusNotFound:
			want = p.Detail + "; "
		default:
			t.Errorf("%s: status %d", c.rest, r.status)
			continue
		}
		if len(p.Errors) > 1 || !strings.HasPrefix(text[0], want) {
			t.Errorf("%s %v: tool error %q; REST %s answered %d %q %+v", c.tool, c.args, text[0], c.rest, r.status, p.Detail, p.Errors)
		}
	}
	for name := range tools {
		if !covered[name] {
			t.Errorf("tool %s has no bad-input case", name)
		}
	}
}
