// Package docs holds the repository's documentation (language.md,
// architecture.md, codes.md, ...) and the tests that keep it true: the API
// reference in language.md is generated from engine/api, the package graph
// in architecture.md from `go list`, and every `docs/language.md#<anchor>`
// cited in the repository must name a heading that exists.
//
// After adding, moving or removing a package or an engine/api entry,
// regenerate the generated parts with `go generate ./docs`.
package docs

//go:generate go test -run "^(TestLanguageAPI|TestArchitecture)$" -update .
