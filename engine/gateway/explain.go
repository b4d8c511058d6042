package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
)

// This file words the failures of the model path so that each names the
// URL it called (never the key), the network cause when there is one, and
// the likely fix (docs/gateway.md#errors).

// NetCause describes a failed exchange with host (host:port): the network
// cause in a few words ("connection refused", "no such host ...") and the
// likely fix; fix is "" when there is nothing specific to suggest.
func NetCause(err error, host string) (cause, fix string) {
	var dns *net.DNSError
	var recordHeader tls.RecordHeaderError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", "is the server running and listening on " + host + "?"
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "no such host " + dns.Name, "check the host name in the URL"
		}
		return "DNS lookup of " + dns.Name + " failed: " + dns.Err, "check the host name and the network"
	case errors.As(err, &recordHeader):
		return "TLS handshake failed: the server did not answer in TLS", "it may speak plain HTTP: use http:// instead of https://"
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid):
		return "TLS certificate not accepted: " + rootMessage(err), "use the server's real host name, or a certificate the system trusts"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server", "it may expect TLS: use https:// instead of http://, or check the server's log"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable", "check the address and the network"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timed out", "is the server up and not overloaded?"
	}
	return rootMessage(err), ""
}

// rootMessage is err's text without the "Post \"URL\": " prefix net/http
// adds (the message names the URL itself).
func rootMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// statusFix is the likely fix for a gateway's non-2xx answer at url, or "".
// source says where the URL came from ("PROMPTFORGE_GATEWAY_URL").
func statusFix(status int, base, source string) string {
	switch {
	case status == 404 && !hasV1(base):
		return "the base URL has no /v1 (OpenAI-compatible servers serve /v1/models and /v1/chat/completions): set " + source + " to " + base + "/v1"
	case status == 404:
		return "is " + base + " an OpenAI-compatible API root?"
	case status == 401 || status == 403:
		return "check the API key (" + EnvKey + ", or the endpoint's api_key in a gateway file)"
	case status >= 500:
		return "the server failed: its log (or the message above) says why; retry later"
	}
	return ""
}

// hasV1 reports whether a base URL's path has a version segment (/v1,
// /v1beta, /openai/v1).
func hasV1(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return true
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if len(seg) > 1 && seg[0] == 'v' && seg[1] >= '0' && seg[1] <= '9' {
			return true
		}
	}
	return false
}

// source names where the client's base URL came from, for fixes.
func (c *Client) source() string {
	if c.cfg.Source != "" {
		return c.cfg.Source
	}
	return EnvURL
}

// urlOf is the URL of endpoint, as messages show it.
func (c *Client) urlOf(endpoint string) string {
	return Redact(redactURL(c.cfg.BaseURL+"/"+endpoint), c.cfg.APIKey)
}

// inProcess reports whether the client talks to a gateway file served
// in-process: its errors come from the file's endpoints, not from a
// server at BaseURL.
func (c *Client) inProcess() bool { return c.cfg.Transport != nil && c.cfg.Source != "" }
