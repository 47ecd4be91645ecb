"""When a loaded page has settled: watched from its first script on.

The load event says the document and its subresources arrived, not that the page shows
its content. A single-page application renders after it: when the data it fetches
arrives, when a script it inserts has run, or when a timer it set fires. The platforms this
archive exists for all work that way, and a capture taken at the load event keeps their
"Loading…" shell.

A page is settled when, for `quiet_ms` in a row, no request is in flight (the page session
counts them from the browser's request events, leaving out streams such as media and event
sources), no short timer is pending, and its number of elements has not changed. The settle
operation waits for that, at most `max_ms`, and says which it was.

Timers are watched in the page's own world (`WATCH_JS`, added to every snapshot's context
before any page script runs, through `Proxy` wrappers that leave `setTimeout` native to the
page's eyes): each pending `setTimeout` with its delay, except the re-arming of a timer from
its own callback with the same delay (a polling loop or a clock would otherwise never let a
page settle). `READ_JS` counts those due within the horizon and the page's elements (a live
`HTMLCollection`'s length: cheap, and unlike a `MutationObserver` it costs nothing while a
hostile page builds a million nodes).
"""

from __future__ import annotations

KEY = "dla.settle"
"""`Symbol.for(KEY)` on the window holds the timer table (not enumerable, not a string key)."""

WATCH_JS = """(() => {
  const key = Symbol.for('__KEY__');
  if (Object.prototype.hasOwnProperty.call(window, key)) return;
  const timers = new Map();
  const state = {timers, running: null, all: null};
  Object.defineProperty(window, key, {value: state});
  const set = window.setTimeout;
  if (typeof set !== 'function') return;
  window.setTimeout = new Proxy(set, {
    apply(target, self, args) {
      const callback = args[0];
      if (typeof callback !== 'function') return Reflect.apply(target, self, args);
      const delay = Math.max(0, Number(args[1]) || 0);
      const rest = args.slice(2);
      let id;
      const run = () => {
        timers.delete(id);
        const outer = state.running;
        state.running = delay;
        try { return Reflect.apply(callback, globalThis, rest); }
        finally { state.running = outer; }
      };
      id = Reflect.apply(target, self, [run, args[1]]);
      if (state.running !== delay) timers.set(id, delay);
      return id;
    },
  });
  for (const name of ['clearTimeout', 'clearInterval']) {
    const clear = window[name];
    if (typeof clear !== 'function') continue;
    window[name] = new Proxy(clear, {
      apply(target, self, args) {
        timers.delete(args[0]);
        return Reflect.apply(target, self, args);
      },
    });
  }
})();""".replace("__KEY__", KEY)

READ_JS = """(horizon) => {
  const state = window[Symbol.for('__KEY__')] || {timers: new Map(), all: null};
  let timers = 0;
  for (const delay of state.timers.values()) if (delay <= horizon) timers++;
  state.all = state.all || document.getElementsByTagName('*');
  return {timers, elements: state.all.length};
}""".replace("__KEY__", KEY)

LONG_REQUEST_S = 3.0
"""A request open longer than this is taken for a stream (long polling, a slow beacon)."""

STREAM_TYPES = frozenset({"media", "websocket", "eventsource", "ping"})
"""Request types that may stay open as long as the page does: never waited for."""
