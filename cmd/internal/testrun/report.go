package testrun

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// WriteText prints one block per failing case (path:line: of the case,
// then what differed) and, with repeated runs, pass^N and the flaky
// cases. The closing line is left to the caller.
func WriteText(w io.Writer, rs []*Result, verbose bool) {
	for _, r := range rs {
		path := filepath.ToSlash(r.File.Path)
		switch {
		case r.Status == Fail:
			label := "FAIL"
			if r.Stale {
				label = "STALE"
			}
			msgs := r.Mismatches
			fmt.Fprintf(w, "%s:%d: %s %q", path, r.Line(), label, r.Case.Name)
			if len(msgs) > 0 {
				fmt.Fprintf(w, ": %s", msgs[0].Msg)
			}
			fmt.Fprintln(w)
			for _, m := range msgs[1:] {
				fmt.Fprintf(w, "%s:%d: \t%s\n", path, m.Pos.Line, m.Msg)
			}
			if r.Diff != "" {
				for _, ln := range strings.Split(strings.TrimRight(r.Diff, "\n"), "\n") {
					fmt.Fprintf(w, "    %s\n", ln)
				}
			}
			if r.Trace != "" {
				fmt.Fprintf(w, "    trace: %s\n", filepath.ToSlash(r.Trace))
			}
		case verbose && r.Status == Pass:
			fmt.Fprintf(w, "%s:%d: ok %q (%s)\n", path, r.Line(), r.Case.Name, r.Duration.Round(1e6))
		case verbose && r.Status == Skip:
			fmt.Fprintf(w, "%s:%d: skip %q: %s\n", path, r.Line(), r.Case.Name, r.Case.Skip)
		}
	}
}

// WriteRepeat prints pass^N and the flaky cases of a repeated run.
func WriteRepeat(w io.Writer, rs []*Result, n int) {
	all, ran := 0, 0
	var flaky []*Result
	for _, r := range rs {
		if r.Status == Skip {
			continue
		}
		ran++
		if r.Passes == r.Runs && r.Runs > 0 {
			all++
		}
		if r.Flaky() {
			flaky = append(flaky, r)
		}
	}
	share := 0.0
	if ran > 0 {
		share = 100 * float64(all) / float64(ran)
	}
	fmt.Fprintf(w, "pass^%d: %d of %d cases passed all %d runs (%.0f%%)\n", n, all, ran, n, share)
	if len(flaky) == 0 {
		fmt.Fprintln(w, "flaky: none")
	} else {
		fmt.Fprintf(w, "flaky: %d case(s)\n", len(flaky))
		for _, r := range flaky {
			fmt.Fprintf(w, "  %s:%d: %q passed %d of %d runs\n", filepath.ToSlash(r.File.Path), r.Line(), r.Case.Name, r.Passes, r.Runs)
		}
	}
	if ran == 0 {
		return
	}
	fmt.Fprintln(w, "pass rates (95% Wilson interval):")
	for _, r := range rs {
		if r.Status == Skip || r.Runs == 0 {
			continue
		}
		lo, hi := Wilson(r.Passes, r.Runs)
		verdict := "ok"
		if r.Status == Fail {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s:%d: %q %d/%d = %s (%s–%s), needs %s: %s\n", filepath.ToSlash(r.File.Path), r.Line(), r.Case.Name, r.Passes, r.Runs, pct(r.Rate()), pct(lo), pct(hi), pct(r.PassRate), verdict)
	}
}

// JUnit XML, as CI systems read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Line      int           `xml:"line,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func secs(d interface{ Seconds() float64 }) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes JUnit XML: one testsuite per test file.
func WriteJUnit(w io.Writer, rs []*Result) error {
	doc := junitSuites{Name: "forge-lsp test"}
	index := map[*File]int{}
	var total float64
	for _, r := range rs {
		i, ok := index[r.File]
		if !ok {
			i = len(doc.Suites)
			index[r.File] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: filepath.ToSlash(r.File.Path)})
		}
		s := &doc.Suites[i]
		jc := junitCase{Name: r.Case.Name, Classname: strings.TrimSuffix(filepath.ToSlash(r.File.Path), Suffix), File: filepath.ToSlash(r.File.Path), Line: r.Line(), Time: secs(r.Duration)}
		s.Tests++
		doc.Tests++
		switch r.Status {
		case Fail:
			typ := "failure"
			if r.Stale {
				typ = "stale"
			}
			first := ""
			if len(r.Mismatches) > 0 {
				first = r.Mismatches[0].Msg
			}
			jc.Failure = &junitFailure{Message: first, Type: typ, Text: r.Message()}
			if r.Transcript != "" {
				jc.SystemOut = r.Transcript
			}
			s.Failures++
			doc.Failures++
		case Skip:
			jc.Skipped = &junitSkipped{Message: r.Case.Skip}
			s.Skipped++
			doc.Skipped++
		}
		s.Cases = append(s.Cases, jc)
		total += r.Duration.Seconds()
	}
	for i := range doc.Suites {
		var t float64
		for _, c := range doc.Suites[i].Cases {
			var x float64
			fmt.Sscan(c.Time, &x)
			t += x
		}
		doc.Suites[i].Time = fmt.Sprintf("%.3f", t)
	}
	doc.Time = fmt.Sprintf("%.3f", total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// JSONResult is one case in --format json.
type JSONResult struct {
	File       string   `json:"file"`
	Line       int      `json:"line"`
	Name       string   `json:"name"`
	Status     Status   `json:"status"`
	Stale      bool     `json:"stale,omitempty"`
	Messages   []string `json:"messages,omitempty"`
	Expected   *string  `json:"expected,omitempty"`
	Actual     *string  `json:"actual,omitempty"`
	Diff       string   `json:"diff,omitempty"`
	Runs       int      `json:"runs"`
	Passes     int      `json:"passes"`
	DurationMS float64  `json:"duration_ms"`
	Output     string   `json:"output,omitempty"`
	Trace      string   `json:"trace,omitempty"`
	// Transcript is the run's readable event log (model rounds, tool
	// calls, store writes): every case's with Options.Transcripts, else
	// a failing case's.
	Transcript string `json:"transcript,omitempty"`
	// Judge is the judge's verdict (expect.judge), passing or not.
	Judge *JSONVerdict `json:"judge,omitempty"`
}

// JSONVerdict is a judge's verdict in the JSON report and results file.
type JSONVerdict struct {
	Model   string `json:"model"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

func jsonVerdict(v *Verdict) *JSONVerdict {
	if v == nil {
		return nil
	}
	return &JSONVerdict{Model: v.Model, Verdict: v.Verdict, Reason: v.Reason}
}

// JSONReport is the --format json document.
type JSONReport struct {
	Results []JSONResult `json:"results"`
	Passed  int          `json:"passed"`
	Failed  int          `json:"failed"`
	Skipped int          `json:"skipped"`
}

// ToJSON converts results.
func ToJSON(rs []*Result) JSONReport {
	rep := JSONReport{Results: []JSONResult{}}
	for _, r := range rs {
		jr := JSONResult{File: filepath.ToSlash(r.File.Path), Line: r.Line(), Name: r.Case.Name, Status: r.Status, Stale: r.Stale,
			Diff: r.Diff, Runs: r.Runs, Passes: r.Passes, DurationMS: float64(r.Duration.Microseconds()) / 1000, Output: r.Output, Trace: r.Trace, Transcript: r.Transcript, Judge: jsonVerdict(r.Judge)}
		if r.Status == Fail {
			for _, m := range r.Mismatches {
				jr.Messages = append(jr.Messages, m.Msg)
				if m.Expected != "" || m.Actual != "" {
					e, a := m.Expected, m.Actual
					jr.Expected, jr.Actual = &e, &a
				}
			}
		}
		if r.Status == Skip {
			jr.Messages = []string{r.Case.Skip}
		}
		rep.Results = append(rep.Results, jr)
	}
	s := Summarize(rs)
	rep.Passed, rep.Failed, rep.Skipped = s.Passed, s.Failed, s.Skipped
	return rep
}

// WriteJSON writes the --format json document.
func WriteJSON(w io.Writer, rs []*Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ToJSON(rs))
}

// WriteGitHub writes one workflow error annotation per failing case.
func WriteGitHub(w io.Writer, rs []*Result) {
	for _, r := range rs {
		if r.Status != Fail {
			continue
		}
		title := "forge-lsp test: " + r.Case.Name
		if r.Stale {
			title += " (stale cassette)"
		}
		fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n", ghProp(filepath.ToSlash(r.File.Path)), r.Line(), ghProp(title), ghData(r.Message()))
	}
}

func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
