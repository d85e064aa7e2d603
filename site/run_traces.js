// node run_traces.js PLAYGROUND_JS < JSON array of script texts
// Runs each script through the playground's WebAssembly module (the same calls the page makes)
// and prints a JSON array of {status, output, line, column, states}: the traces the site's
// pages show, and for a script that ran, the state after each step (states[N - 1] after
// step N, from playground_state(), as the pages draw it).
"use strict";
const factory = require(require("path").resolve(process.argv[2]));
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const made = factory();  // the module itself (compiled synchronously), or a promise of it
Promise.resolve(made.then ? made : made.ready).then((m) => {
  const results = input.map((text) => {
    const output = m.ccall("playground_run", "string", ["string"], [text]);
    const result = {
      status: m.ccall("playground_status", "number", [], []),
      output,
      line: m.ccall("playground_error_line", "number", [], []),
      column: m.ccall("playground_error_column", "number", [], []),
      states: [],
    };
    if (result.status === 0) {
      const steps = (output.match(/^\[\d+\] /gm) || []).length;
      for (let n = 1; n <= steps; ++n) {
        const state = m.ccall("playground_state", "string", ["string", "number"], [text, n]);
        if (m.ccall("playground_status", "number", [], []) !== 0) {
          throw new Error(`the state after step ${n} could not be read: ${state}`);
        }
        result.states.push(JSON.parse(state));
      }
    }
    return result;
  });
  process.stdout.write(JSON.stringify(results));
});
