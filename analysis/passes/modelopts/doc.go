// Package modelopts checks literal arguments of models.bind/need and
// models.default against the runtime's shape rules (docs/language.md#model-options): at
// most three arguments, a string alias and description, and an opts table
// whose keys are those of engine/api.ModelOpts (thinking: boolean,
// context: integer > 0, temperature: number from 0 to 2, max_tokens:
// integer > 0). An unknown key gets a did-you-mean quick fix.
package modelopts
