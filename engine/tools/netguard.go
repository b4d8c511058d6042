package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// WebFetchAllowPrivateEnv names the environment variable that, set to 1,
// lets web_fetch reach loopback, private, link-local and other
// non-public addresses. The CLI and the language server read it.
const WebFetchAllowPrivateEnv = "FORGE_WEB_FETCH_ALLOW_PRIVATE"

// A model chooses web_fetch's URLs, and a prompt run from the editor runs
// on the author's machine: without a guard a page (or a prompt injection)
// could make it read http://127.0.0.1:... admin pages or a cloud
// metadata endpoint. The guard checks the address actually dialled, so
// neither a redirect nor a DNS answer can get around it; through a proxy
// (HTTP_PROXY and friends) the target host is resolved and checked
// instead, since the proxy dials it.

// nonPublic lists ranges beyond the ones net/netip classifies.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (embeds IPv4)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
}

// nonPublicKind says why ip is not a public address, or "" when it is.
func nonPublicKind(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return "a reserved address"
		}
	}
	return ""
}

// refusedError is returned when the guard refuses an address.
type refusedError struct {
	host, ip, kind string
}

func (e *refusedError) Error() string {
	what := e.ip
	if e.host != "" && e.host != e.ip {
		what = fmt.Sprintf("%s (%s)", e.host, e.ip)
	}
	return fmt.Sprintf("%s is %s, which web_fetch does not reach unless %s=1 is set", what, e.kind, WebFetchAllowPrivateEnv)
}

type viaProxyKey struct{}

// proxyFor picks a request's proxy (tests replace it; the standard one
// reads the environment once per process).
var proxyFor = http.ProxyFromEnvironment

// WebFetchClient returns the HTTP client web_fetch uses by default: the
// 30 s timeout, proxies from the environment, and, unless allowPrivate,
// the non-public address guard.
func WebFetchClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = func(req *http.Request) (*url.URL, error) { return proxyFor(req) }
	c := &http.Client{Timeout: webFetchTimeout, Transport: tr}
	if allowPrivate {
		return c
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if ctx.Value(viaProxyKey{}) != nil {
			return d.DialContext(ctx, network, addr) // the proxy; its target was checked
		}
		g := *d
		g.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return err
			}
			if k := nonPublicKind(ip); k != "" {
				h, _, _ := net.SplitHostPort(addr)
				return &refusedError{host: h, ip: ip.Unmap().String(), kind: k}
			}
			return nil
		}
		return g.DialContext(ctx, network, addr)
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return checkProxiedTarget(req)
	}
	return c
}

// checkProxiedTarget resolves and checks the target host of a request
// that goes through a proxy (the dial guard only sees the proxy then).
func checkProxiedTarget(req *http.Request) error {
	proxy, err := proxyFor(req)
	if err != nil || proxy == nil {
		return err
	}
	return checkHost(req.Context(), req.URL)
}

// checkHost resolves u's host and refuses it when any address is not
// public.
func checkHost(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if k := nonPublicKind(a); k != "" {
			return &refusedError{host: host, ip: a.Unmap().String(), kind: k}
		}
	}
	return nil
}

// guardedRequest prepares req for the guarded client: a proxied request
// has its target checked up front and its dial to the proxy let through.
func guardedRequest(req *http.Request, guarded bool) (*http.Request, error) {
	if !guarded {
		return req, nil
	}
	proxy, err := proxyFor(req)
	if err != nil || proxy == nil {
		return req, err
	}
	if err := checkHost(req.Context(), req.URL); err != nil {
		return nil, err
	}
	return req.WithContext(context.WithValue(req.Context(), viaProxyKey{}, true)), nil
}
