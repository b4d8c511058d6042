package gatewayd

import (
	"fmt"
	"log/slog"
)

// Secret is a credential from a gateway file. Every way of printing or
// serialising it gives [REDACTED]; Expose is the only accessor of the
// plain text, used when a request header is written. The text sits
// behind a pointer, so that even a printer that bypasses Format (fmt's
// %!verb(...) of a nested pointer) shows an address, not the credential.
type Secret struct{ p *string }

// NewSecret wraps a credential.
func NewSecret(s string) Secret { return Secret{&s} }

const redacted = "[REDACTED]"

// Expose returns the credential for a request header.
func (s Secret) Expose() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// Empty reports whether no credential is set.
func (s Secret) Empty() bool { return s.Expose() == "" }

// Format writes [REDACTED] for every verb (%s, %v, %#v, %q, %x, %d ...).
func (s Secret) Format(f fmt.State, _ rune) { f.Write([]byte(redacted)) }

// String is [REDACTED].
func (s Secret) String() string { return redacted }

// LogValue keeps the credential out of slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText (and so JSON and TOML encoding) gives [REDACTED].
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// UnmarshalText reads the credential from the file.
func (s *Secret) UnmarshalText(b []byte) error { *s = NewSecret(string(b)); return nil }
