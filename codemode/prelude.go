package codemode

import (
	"sync"

	"github.com/dop251/goja"
)

// preludeSource defines ToolCallError and hands back what the host needs
// from the pristine global objects before the program can replace them.
const preludeSource = `(function () {
  class ToolCallError extends Error {
    constructor(toolName, message) {
      super(message);
      Object.defineProperty(this, "toolName", { value: toolName, enumerable: true });
    }
  }
  Object.defineProperty(ToolCallError.prototype, "name", { value: "ToolCallError" });
  Object.defineProperty(globalThis, "ToolCallError", { value: ToolCallError });
  return [ToolCallError, JSON.parse, JSON.stringify, Object.prototype, Array.prototype, Error];
})()`

var prelude = sync.OnceValue(func() *goja.Program {
	// A compiled Program is immutable and may run in many runtimes.
	return goja.MustCompile("prelude.js", preludeSource, true)
})
