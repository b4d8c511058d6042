package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forge-lsp/forge-lsp/engine/toolrule"
)

// web_fetch limits.
const (
	webFetchTimeout  = 30 * time.Second
	webFetchMaxBody  = 4 << 20
	webFetchMaxChars = 100_000
)

// WebFetch is the built-in web_fetch tool: an HTTP GET from this machine,
// HTML reduced to Markdown-like text. Its output is untrusted.
type WebFetch struct {
	client  *http.Client
	guarded bool
}

// NewWebFetch returns web_fetch; a nil client means WebFetchClient(false):
// the 30 s timeout, and loopback, private, link-local and other
// non-public addresses refused (see netguard.go).
func NewWebFetch(c *http.Client) *WebFetch {
	if c == nil {
		return &WebFetch{client: WebFetchClient(false), guarded: true}
	}
	return &WebFetch{client: c}
}

// NewGuardedWebFetch returns web_fetch with the default client, which
// reaches non-public addresses only when allowPrivate is set.
func NewGuardedWebFetch(allowPrivate bool) *WebFetch {
	return &WebFetch{client: WebFetchClient(allowPrivate), guarded: !allowPrivate}
}

// ID implements Tool.
func (w *WebFetch) ID() toolrule.ID { return toolrule.WebFetchID }

// WireName implements Tool.
func (w *WebFetch) WireName() string { return "web_fetch" }

// Description implements Tool.
func (w *WebFetch) Description() string { return toolrule.WebFetchDescription }

// Parameters implements Tool.
func (w *WebFetch) Parameters() json.RawMessage { return json.RawMessage(toolrule.WebFetchSchema) }

// Call fetches the page.
func (w *WebFetch) Call(ctx context.Context, arguments string) (Output, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(arguments), &args); err != nil || args == nil {
		return Output{}, invalidArgs("web_fetch: arguments must be a JSON object")
	}
	for k := range args {
		if k != "url" {
			return Output{}, invalidArgs("web_fetch: unknown argument %q; accepted: url", k)
		}
	}
	var raw string
	if json.Unmarshal(args["url"], &raw) != nil || strings.TrimSpace(raw) == "" {
		return Output{}, invalidArgs("web_fetch: url must be a non-blank string")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Output{}, invalidArgs("web_fetch: url must be an absolute http or https URL, got %q", raw)
	}
	if u.User != nil {
		return Output{}, invalidArgs("web_fetch: url must not embed credentials")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Output{}, invalidArgs("web_fetch: %v", err)
	}
	req.Header.Set("User-Agent", "forge-lsp-web_fetch/1")
	req.Header.Set("Accept", "text/html,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.1")
	req, err = guardedRequest(req, w.guarded)
	var resp *http.Response
	if err == nil {
		resp, err = w.client.Do(req)
	}
	if err != nil {
		if ctx.Err() != nil {
			return Output{}, &Error{Kind: ErrCancelled, Msg: "web_fetch: cancelled", Err: ctx.Err()}
		}
		var refused *refusedError
		if errors.As(err, &refused) {
			return Output{}, &Error{Kind: ErrInvalidArguments, Msg: fmt.Sprintf("web_fetch: refused to fetch %s: %v", u.Redacted(), refused), Err: err}
		}
		return Output{}, &Error{Kind: ErrTransport, Msg: fmt.Sprintf("web_fetch: cannot fetch %s: %v", u.Redacted(), unwrapURLError(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, webFetchMaxBody+1))
	if err != nil {
		return Output{}, &Error{Kind: ErrTransport, Msg: fmt.Sprintf("web_fetch: reading %s: %v", u.Redacted(), err)}
	}
	if resp.StatusCode/100 != 2 {
		return Output{}, &Error{Kind: ErrBackend, Msg: fmt.Sprintf("web_fetch: %s returned HTTP %d", u.Redacted(), resp.StatusCode)}
	}
	if len(body) > webFetchMaxBody {
		return Output{}, &Error{Kind: ErrBackend, Msg: fmt.Sprintf("web_fetch: %s is larger than %d bytes", u.Redacted(), webFetchMaxBody)}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var text string
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || (mt == "" && looksHTML(body)):
		text = HTMLToMarkdown(string(body))
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "":
		text = string(body)
	default:
		return Output{}, &Error{Kind: ErrBackend, Msg: fmt.Sprintf("web_fetch: %s has content type %s, which is not text", u.Redacted(), mt)}
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if utf8.RuneCountInString(text) > webFetchMaxChars {
		r := []rune(text)
		text = string(r[:webFetchMaxChars]) + "\n\n[truncated]"
	}
	return Untrusted(text), nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func looksHTML(b []byte) bool {
	s := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(s, "<html") || strings.Contains(s, "<!doctype html")
}

// HTMLToMarkdown reduces an HTML page to its readable text with Markdown
// headings, list bullets, links and paragraphs. It keeps only <main> or
// <article> when the page has one, and drops scripts, styles, navigation
// and forms. It is a reader, not a validator: broken markup degrades to
// text.
func HTMLToMarkdown(page string) string {
	lower := strings.ToLower(page)
	for _, tag := range []string{"main", "article"} {
		if i := strings.Index(lower, "<"+tag); i >= 0 {
			if j := strings.LastIndex(lower, "</"+tag+">"); j > i {
				page, lower = page[i:j], lower[i:j]
				break
			}
		}
	}
	skip := map[string]bool{"script": true, "style": true, "noscript": true, "nav": true, "header": false, "footer": true, "form": true, "svg": true, "template": true, "head": true, "iframe": true}
	var out strings.Builder
	var href string
	i := 0
	for i < len(page) {
		lt := strings.IndexByte(page[i:], '<')
		if lt < 0 {
			out.WriteString(html.UnescapeString(page[i:]))
			break
		}
		out.WriteString(html.UnescapeString(page[i : i+lt]))
		i += lt
		if strings.HasPrefix(page[i:], "<!--") {
			end := strings.Index(page[i:], "-->")
			if end < 0 {
				break
			}
			i += end + 3
			continue
		}
		gt := strings.IndexByte(page[i:], '>')
		if gt < 0 {
			break
		}
		tagText := page[i+1 : i+gt]
		i += gt + 1
		closing := strings.HasPrefix(tagText, "/")
		name := strings.ToLower(strings.TrimLeft(tagText, "/"))
		if k := strings.IndexAny(name, " \t\r\n/"); k >= 0 {
			name = name[:k]
		}
		if !closing && skip[name] {
			end := strings.Index(strings.ToLower(page[i:]), "</"+name)
			if end < 0 {
				break
			}
			i += end
			continue
		}
		switch name {
		case "h1", "h2", "h3", "h4", "h5", "h6":
			if closing {
				out.WriteString("\n\n")
			} else {
				out.WriteString("\n\n" + strings.Repeat("#", int(name[1]-'0')) + " ")
			}
		case "p", "div", "section", "table", "tr", "blockquote", "pre", "ul", "ol":
			out.WriteString("\n\n")
		case "br":
			out.WriteString("\n")
		case "li":
			if !closing {
				out.WriteString("\n- ")
			}
		case "td", "th":
			out.WriteString(" ")
		case "a":
			if closing {
				if href != "" {
					out.WriteString("](" + href + ")")
				}
				href = ""
			} else {
				href = attr(tagText, "href")
				if strings.HasPrefix(href, "http") {
					out.WriteString("[")
				} else {
					href = ""
				}
			}
		}
	}
	return tidy(out.String())
}

// attr extracts a quoted attribute value from a start tag's text.
func attr(tag, name string) string {
	l := strings.ToLower(tag)
	i := strings.Index(l, name+"=")
	if i < 0 {
		return ""
	}
	v := tag[i+len(name)+1:]
	if v == "" {
		return ""
	}
	if q := v[0]; q == '"' || q == '\'' {
		if j := strings.IndexByte(v[1:], q); j >= 0 {
			return html.UnescapeString(v[1 : 1+j])
		}
		return ""
	}
	if j := strings.IndexAny(v, " \t>"); j >= 0 {
		v = v[:j]
	}
	return html.UnescapeString(v)
}

// tidy collapses runs of spaces inside lines and of blank lines.
func tidy(s string) string {
	var lines []string
	blank := 0
	for _, ln := range strings.Split(s, "\n") {
		ln = strings.Join(strings.Fields(ln), " ")
		if ln == "" {
			blank++
			continue
		}
		if blank > 0 && len(lines) > 0 {
			lines = append(lines, "")
		}
		blank = 0
		lines = append(lines, ln)
	}
	return strings.Join(lines, "\n")
}
