"""What a page does to load content lazily, watched from its first script on.

Scrolling a page to the bottom, a viewport at a time, costs a raster of every viewport (on
the bench site as much CPU as the full-page screenshot) and half a second; it only gains
something on a page that loads content when it scrolls into view. Such a page says so:
it hands elements to an `IntersectionObserver`, listens to `scroll` on the window or the
document, or marks images and frames lazy (`loading="lazy"`, `data-src`, lazysizes'
classes). The archiver adds `WATCH_JS` to every snapshot's context before any page script
runs; it counts the first two in the page's own world (through `Proxy` wrappers, which leave
the functions native to the page's eyes), and the `lazy` operation reads the counts and the
markup (`READ_JS`). The adjust plugin scrolls only a page with any of them, unless told to
scroll always.
"""

from __future__ import annotations

KEY = "dla.lazy"
"""`Symbol.for(KEY)` on the window holds the counts (not enumerable, not a string key)."""

WATCH_JS = """(() => {
  const key = Symbol.for('__KEY__');
  if (Object.prototype.hasOwnProperty.call(window, key)) return;
  const seen = {observed: 0, scroll: 0};
  Object.defineProperty(window, key, {value: seen});
  const wrap = (owner, name, count) => {
    const original = owner && owner[name];
    if (typeof original !== 'function') return;
    owner[name] = new Proxy(original, {
      apply(target, self, args) {
        try { count(self, args); } catch (e) {}
        return Reflect.apply(target, self, args);
      },
    });
  };
  wrap(window.IntersectionObserver && IntersectionObserver.prototype, 'observe',
       () => { seen.observed++; });
  wrap(window.EventTarget && EventTarget.prototype, 'addEventListener', (self, args) => {
    if (args[0] === 'scroll' && (self === window || self === document ||
        self === document.documentElement || self === document.body)) seen.scroll++;
  });
})();""".replace("__KEY__", KEY)

LAZY_MARKUP = (
    '[loading="lazy" i], img[data-src], img[data-srcset], source[data-srcset], [data-lazy], '
    "[data-lazy-src], [data-bg], [data-background], .lazyload, .lazy"
)

READ_JS = """() => {
  const seen = window[Symbol.for('__KEY__')] || {observed: 0, scroll: 0};
  const handlers = [window.onscroll, document.onscroll, document.body && document.body.onscroll]
    .filter(h => typeof h === 'function');
  return {
    observed: Number(seen.observed) || 0,
    scroll_listeners: (Number(seen.scroll) || 0) + handlers.length,
    lazy_elements: document.querySelectorAll('__MARKUP__').length,
  };
}""".replace("__KEY__", KEY).replace("__MARKUP__", LAZY_MARKUP)
