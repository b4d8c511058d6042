// Package modelrequired reports prose that would reach a model with no
// model bound, which fails at run time with ModelRequired (see
// docs/language.md#section-blocks).
//
// H1 prose needs a models.default in an H1 Lua block before it. Section
// prose needs the prompt's models.default or a models.use in the section
// before its first prose block (the model is chosen there). Prose that is
// blank, and sections that can never run (off-walk or child sections that
// no literal jump, execute or fanout reaches, directly or by falling
// through from a reached sibling), are not reported. Human-only notes in
// the H1 belong below a --- break, where they are dead text.
package modelrequired
