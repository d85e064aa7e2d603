// The playground: runs a script on the reference model compiled to WebAssembly
// (playground-module.js, built by scripts/spec-site from model/ and oplang/) and shows its trace
// as `spec-trace --model-only` prints it, each step clickable: a click draws the state after
// that step (state_view.js, from playground_state()); after a run the last step's is drawn.
// The script lives in the address (#s=...), examples are #example=NAME. The page's state
// (loading, done, error, refused, failed) is on <body data-state>.
"use strict";
(function () {
  // The WebAssembly entry's limits (site/playground.cpp; read from it once it is loaded), checked
  // here first so an enormous paste never reaches the parser.
  let MAX_BYTES = 64 * 1024;
  let MAX_LINES = 2000;
  const $ = (id) => document.getElementById(id);
  let model = null;
  let ran = "";  // the script the trace shows, whose states a click draws

  function setState(state, message) {
    document.body.dataset.state = state;
    $("status").textContent = message;
  }

  function showError(text) {
    $("error").hidden = false;
    $("error").textContent = text;
    $("trace").textContent = "";
    $("state").textContent = "";
  }

  function lineCount(text) {
    const newlines = (text.match(/\n/g) || []).length;
    return newlines + (text.length > 0 && !text.endsWith("\n") ? 1 : 0);
  }

  // The line of the script an error points into, with a caret under the column.
  function pointAt(text, line, column) {
    const source = text.split("\n")[line - 1] || "";
    return `line ${line}, column ${column}:\n${source}\n${" ".repeat(Math.max(column - 1, 0))}^`;
  }

  function run() {
    const text = $("script").value;
    $("error").hidden = true;
    $("share").href = "#s=" + encodeURIComponent(text);
    const bytes = new TextEncoder().encode(text).length;
    const lines = lineCount(text);
    if (bytes > MAX_BYTES || lines > MAX_LINES) {
      showError(`script too large: ${bytes} bytes, ${lines} lines (the playground takes at most ` +
                `${MAX_BYTES / 1024} KiB and ${MAX_LINES} lines)`);
      return setState("refused", "refused: too large");
    }
    if (!model) return setState("loading", "loading the model...");
    let output;
    try {
      output = model.ccall("playground_run", "string", ["string"], [text]);
    } catch (e) {
      // The model aborted (out of its 256 MiB, say): say so and start a fresh one.
      showError("the model stopped: " + e);
      setState("failed", "failed");
      return load();
    }
    const status = model.ccall("playground_status", "number", [], []);
    if (status === 0) {
      ran = text;
      const steps = StateView.fillTrace($("trace"), output);
      select(steps);
      return setState("done", `ran ${steps} steps; click a step to see the state after it`);
    }
    if (status === 1) {
      const line = model.ccall("playground_error_line", "number", [], []);
      const column = model.ccall("playground_error_column", "number", [], []);
      showError(output + "\n\n" + pointAt(text, line, column));
      selectAt(text, line, column);
      return setState("error", `parse error at line ${line}, column ${column}`);
    }
    showError(output);
    setState("refused", "refused: too large");
  }

  // The state after step n of the script that ran, from the model (null if it cannot say).
  function stateAfter(n) {
    try {
      const json = model.ccall("playground_state", "string", ["string", "number"], [ran, n]);
      if (model.ccall("playground_status", "number", [], []) !== 0) throw new Error(json);
      return JSON.parse(json);
    } catch (e) {
      $("state").textContent = "the state could not be read: " + (e.message || e);
      return null;
    }
  }
  const select = StateView.attach($("trace"), $("state"), stateAfter);

  // Puts the text cursor where the parse error is.
  function selectAt(text, line, column) {
    const lines = text.split("\n");
    let at = 0;
    for (let i = 0; i < line - 1 && i < lines.length; ++i) at += lines[i].length + 1;
    at += Math.max(column - 1, 0);
    $("script").setSelectionRange(at, at);
  }

  // Loads the script the address names: #s=TEXT (shared) or #example=NAME.
  function fromAddress() {
    const hash = location.hash.slice(1);
    if (hash.startsWith("s=")) {
      try {
        $("script").value = decodeURIComponent(hash.slice(2));
      } catch (e) {
        return showError("the address holds no readable script (#s=... is not URI-encoded text)");
      }
    } else if (hash.startsWith("example=")) {
      const name = decodeURIComponent(hash.slice(8));
      if (!(name in window.EXAMPLES)) return showError(`no example named '${name}'`);
      $("script").value = window.EXAMPLES[name];
    } else if (!$("script").value) {
      $("script").value = window.EXAMPLES.seed004_trace || Object.values(window.EXAMPLES)[0] || "";
    }
    run();
  }

  function load() {
    model = null;
    const made = Playground();  // a promise, or the module itself when compiled synchronously
    return Promise.resolve(made.then ? made : made.ready).then((m) => {
      model = m;
      MAX_BYTES = m.ccall("playground_max_bytes", "number", [], []);
      MAX_LINES = m.ccall("playground_max_lines", "number", [], []);
      setState("ready", "model loaded");
    });
  }

  $("run").addEventListener("click", () => {
    history.replaceState(null, "", "#s=" + encodeURIComponent($("script").value));
    run();
  });
  $("script").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("run").click();
  });
  window.addEventListener("hashchange", fromAddress);
  setState("loading", "loading the model...");
  load().then(fromAddress, (e) => {
    showError("the WebAssembly model did not load: " + e);
    setState("failed", "failed");
  });
})();
