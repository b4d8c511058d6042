package cli

import (
	"encoding/json"
	"io"
	"path/filepath"

	"github.com/forge-lsp/forge-lsp/analysis/checker"
)

// SARIF 2.1.0 output for code-scanning services. Columns are UTF-16 code
// units, SARIF's default columnKind.

type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	ShortDescription     sarifText    `json:"shortDescription"`
	DefaultConfiguration sarifRuleCfg `json:"defaultConfiguration"`
	Properties           sarifProps   `json:"properties"`
}

type sarifProps struct {
	Analyzer string `json:"analyzer"`
}

type sarifRuleCfg struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
	Fixes     []sarifFix      `json:"fixes,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn"`
	EndLine     int `json:"endLine"`
	EndColumn   int `json:"endColumn"`
}

type sarifFix struct {
	Description     sarifText             `json:"description"`
	ArtifactChanges []sarifArtifactChange `json:"artifactChanges"`
}

type sarifArtifactChange struct {
	ArtifactLocation sarifArtifact      `json:"artifactLocation"`
	Replacements     []sarifReplacement `json:"replacements"`
}

type sarifReplacement struct {
	DeletedRegion   sarifRegion `json:"deletedRegion"`
	InsertedContent sarifText   `json:"insertedContent"`
}

func sarifLevel(sev string) string {
	switch sev {
	case "error", "warning":
		return sev
	}
	return "note"
}

func writeSARIF(w io.Writer, diags []Diagnostic) {
	codes := checker.Codes()
	index := map[string]int{}
	var rules []sarifRule
	for i, c := range codes {
		index[c.Name] = i
		rules = append(rules, sarifRule{ID: c.Name, ShortDescription: sarifText{c.Summary},
			DefaultConfiguration: sarifRuleCfg{sarifLevel(c.Severity.String())},
			Properties:           sarifProps{Analyzer: c.Analyzer.Name}})
	}
	results := []sarifResult{}
	for _, d := range diags {
		idx, ok := index[d.Code]
		if !ok { // the internal code
			idx = len(rules)
			index[d.Code] = idx
			rules = append(rules, sarifRule{ID: d.Code, ShortDescription: sarifText{"forge-lsp internal error"},
				DefaultConfiguration: sarifRuleCfg{"error"}})
		}
		uri := filepath.ToSlash(d.Path)
		region := func(start, end int) sarifRegion {
			l, c := d.File.LSPPosition(start)
			el, ec := d.File.LSPPosition(end)
			return sarifRegion{StartLine: int(l) + 1, StartColumn: int(c) + 1, EndLine: int(el) + 1, EndColumn: int(ec) + 1}
		}
		r := sarifResult{RuleID: d.Code, RuleIndex: idx, Level: sarifLevel(d.Severity), Message: sarifText{d.Message},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{uri}, Region: region(d.Span.Start, d.Span.End)}}}}
		for i, fx := range d.Fixes {
			change := sarifArtifactChange{ArtifactLocation: sarifArtifact{uri}}
			for _, e := range d.FixSpans[i] {
				change.Replacements = append(change.Replacements, sarifReplacement{DeletedRegion: region(e.Span.Start, e.Span.End), InsertedContent: sarifText{e.NewText}})
			}
			r.Fixes = append(r.Fixes, sarifFix{Description: sarifText{fx.Message}, ArtifactChanges: []sarifArtifactChange{change}})
		}
		results = append(results, r)
	}
	log := sarifLog{Version: "2.1.0", Schema: "https://json.schemastore.org/sarif-2.1.0.json",
		Runs: []sarifRun{{Tool: sarifTool{Driver: sarifDriver{Name: "forge-lsp",
			InformationURI: "https://github.com/forge-lsp/forge-lsp/blob/main/docs/codes.md", Rules: rules}},
			Results: results}}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(log)
}
