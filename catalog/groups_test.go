package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestValidateGroup(t *testing.T) {
	for _, c := range []struct {
		names  []string
		fields []string
	}{
		{[]string{"Bulbasaur", "フシギダネ"}, nil},
		{[]string{"Bulbasaur"}, []string{""}},
		{nil, []string{""}},
		{slices.Repeat([]string{"x"}, 33), []string{""}},
		{[]string{"Bulbasaur", ""}, []string{"[1]"}},
		{[]string{"Bulbasaur", " "}, []string{"[1]"}},
		{[]string{strings.Repeat("a", 201), "b"}, []string{"[0]"}},
		{[]string{"", "b", ""}, []string{"[0]", "[2]"}},
	} {
		var fields []string
		for _, e := range ValidateGroup(c.names) {
			fields = append(fields, e.Field)
			if e.Expected == "" || e.Found == "" {
				t.Errorf("%q: %+v says too little", c.names, e)
			}
		}
		if !slices.Equal(fields, c.fields) {
			t.Errorf("%q: problems with %q, want %q", c.names, fields, c.fields)
		}
	}
}
