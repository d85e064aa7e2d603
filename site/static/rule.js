// A rule page's example: the state after each step (window.EXAMPLE_STATES, computed by the
// playground's WebAssembly model when the site was generated) drawn beside the trace by
// state_view.js, as the playground draws it; the last step's at first, a click picks another.
"use strict";
(function () {
  const trace = document.getElementById("example-trace");
  const panel = document.getElementById("example-state");
  const states = window.EXAMPLE_STATES || [];
  if (!trace || !panel || !states.length) return;
  const select = StateView.attach(trace, panel, (n) => states[n - 1] || null);
  select(states.length);
})();
