package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

// findingsOut prints findings as each file's check ends (text and json),
// so that a folder check holds no file's findings after they are
// printed; SARIF needs them all in one document and keeps them.
type findingsOut struct {
	format string
	w      io.Writer
	n      int // findings printed (json: elements written)
	// errs and warns count the findings by severity for the summary.
	errs, warns int
	sarif       []Diagnostic
}

// add prints (or, for SARIF, keeps) one file's findings.
func (o *findingsOut) add(ds []Diagnostic) {
	for _, d := range ds {
		switch d.Severity {
		case "error":
			o.errs++
		case "warning":
			o.warns++
		}
		switch o.format {
		case "json":
			// The same bytes as json.Encoder with SetIndent("", "  ")
			// on the whole slice: "[", then each element indented by
			// two spaces, separated by ",", then "]".
			b, err := json.MarshalIndent(d, "  ", "  ")
			if err != nil {
				continue
			}
			if o.n == 0 {
				io.WriteString(o.w, "[\n  ")
			} else {
				io.WriteString(o.w, ",\n  ")
			}
			o.w.Write(b)
		case "sarif":
			o.sarif = append(o.sarif, d)
		default:
			fmt.Fprintf(o.w, "%s:%d:%d: %s: %s [%s]\n", d.Path, d.Line, d.Column, d.Severity, d.Message, d.Code)
		}
		o.n++
	}
}

// close ends the output (the json array, the SARIF document).
func (o *findingsOut) close() {
	switch o.format {
	case "json":
		if o.n == 0 {
			io.WriteString(o.w, "[]\n")
		} else {
			io.WriteString(o.w, "\n]\n")
		}
	case "sarif":
		writeSARIF(o.w, o.sarif)
	}
}
