// Package docs holds the repository's documentation (language.md,
// architecture.md, codes.md, ...) and the tests that keep it true: the API
// reference in language.md is generated from engine/api, the package graph
// in architecture.md from `go list`, the benchmark and fuzz tables of
// CONTRIBUTING.md from the tree, and every `docs/language.md#<anchor>`
// cited in the repository must name a heading that exists.
//
// After adding, moving or removing a package, an engine/api entry, a
// benchmark or a fuzz target, regenerate the generated parts with
// `go generate ./docs`.
package docs

//go:generate go test -run "^(TestLanguageAPI|TestArchitecture|TestContributing|TestReviewExamples)$" -update .
