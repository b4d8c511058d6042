//go:build tools

// Package jaeger pins Jaeger (v1.76.0, its v2.13.0 binary cmd/jaeger) as a
// tool for TestJaegerOneTrace; .ci/jaeger.sh builds it. Jaeger's go.mod
// replaces github.com/Shopify/sarama, which `go run module@version`
// refuses, so it is built from this module, which repeats the replace.
package jaeger

import _ "github.com/jaegertracing/jaeger/cmd/jaeger"
