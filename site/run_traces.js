// node run_traces.js PLAYGROUND_JS < JSON array of script texts
// Runs each script through the playground's WebAssembly module (the same calls the page makes)
// and prints a JSON array of {status, output, line, column}: the traces the site's pages show.
"use strict";
const factory = require(require("path").resolve(process.argv[2]));
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const made = factory();  // the module itself (compiled synchronously), or a promise of it
Promise.resolve(made.then ? made : made.ready).then((m) => {
  const results = input.map((text) => {
    const output = m.ccall("playground_run", "string", ["string"], [text]);
    return {
      status: m.ccall("playground_status", "number", [], []),
      output,
      line: m.ccall("playground_error_line", "number", [], []),
      column: m.ccall("playground_error_column", "number", [], []),
    };
  });
  process.stdout.write(JSON.stringify(results));
});
