package parse

import (
	"fmt"
	"regexp"
	"testing"
)

// yamlIntForms are the YAML 1.2 integer forms yamlInt accepts, as the
// regular expressions they were first written with.
var yamlIntForms = []*regexp.Regexp{
	regexp.MustCompile(`^\+?[0-9]+$`),
	regexp.MustCompile(`^-[0-9]+$`),
	regexp.MustCompile(`^0x[0-9a-fA-F]+$`),
	regexp.MustCompile(`^0o[0-7]+$`),
	regexp.MustCompile(`^0b[01]+$`),
}

func checkYAMLIntForm(t *testing.T, s string) {
	want := false
	for _, re := range yamlIntForms {
		want = want || re.MatchString(s)
	}
	_, why := yamlInt(s)
	// Every accepted form either decodes or says why (leading zeros,
	// overflow); every other text is refused with `got "..."` alone.
	if got := why != fmt.Sprintf("got %q", s); got != want {
		t.Errorf("yamlInt(%q): accepted form %v, want %v (why %q)", s, got, want, why)
	}
}

func TestYAMLIntForms(t *testing.T) {
	for _, s := range []string{"", "+", "-", "0", "7", "+7", "-7", "++7", "+-7", "-+7", "007", "1.5", "1e3", "0x", "0x1F", "0X1F", "0xg",
		"0o", "0o17", "0o8", "0b", "0b101", "0b2", " 1", "1 ", "1\n", "٣", "0x1f\n", "99999999999999999999", "-0", "+0x1"} {
		checkYAMLIntForm(t, s)
	}
}

func FuzzYAMLIntForms(f *testing.F) {
	for _, s := range []string{"+12", "-0", "0x1aF", "0o777", "0b1", "1_000", "0x"} {
		f.Add(s)
	}
	f.Fuzz(checkYAMLIntForm)
}
