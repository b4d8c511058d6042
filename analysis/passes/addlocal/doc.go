// Package addlocal checks tools.add_local calls.
//
//   - add-local-in-h1: a tools.add_local call whose code lies in the H1
//     region, including inside functions defined (and called) there. Local
//     tools are H2-only: the call fails in H1 (upstream as a nil call, the
//     Go engine with "only available in sections").
//   - add-local-shape: the call does not have the shape the runtime
//     accepts: four arguments (alias, description, params, handler); a
//     params table mapping each name to "string", "integer", "number" or
//     "boolean", or to a {type, description} array; a handler that is a
//     function. Only literal arguments are judged.
package addlocal
