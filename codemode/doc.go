// Package codemode is Code Mode: the run_code tool. The model writes the body
// of an async TypeScript function; esbuild strips the types, a fresh goja
// runtime runs it, and every tools.<name>(args) call the program makes goes
// through the complete tool pipeline as a sub-call of its own (its id
// registry.ChildID(parent, "code", n): "<parent>:code:<n>"), shown by the
// host as its own tool card.
//
// The package also renders the SDK text the model reads (the instruction
// block and a `declare const tools` whose types come from each tool's JSON
// Schemas) and knows the tools modes native, code and both.
//
// Nothing here writes to stdout: the program's console is captured into the
// run's output.
package codemode
