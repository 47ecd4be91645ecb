"""A Chromium printing bug worked around for the time of one print.

Chromium (seen in 156) never finishes printing a list item whose marker sits outside
(`list-style-position: outside`, the default) when the item holds no line of its own: an
inline element wrapping only an empty block, `<li><a href="/"><div></div></a></li>` (an icon
link whose style sheet did not load). `Page.printToPDF` grows the renderer by hundreds of MB
and ends "Printing failed", and the renderer watchdog then stops the page: no PDF, and the
steps after it fail too. Moving such an item's marker inside its box avoids the bug.

`MARK_JS` does that, in an inline style, for every list item that shows no text and no
replaced element (image, video, form control, ...). The only change to the PDF: such an item,
which took no height (its bullet hung beside nothing), takes one line, its bullet's, so what
follows it moves down a line. `UNMARK_JS` puts each item's `style` attribute back as it was
(or removes the one it added), so the DOM captured after the PDF is the page's own. Both return
how many items they changed.
"""

from __future__ import annotations

KEY = "Symbol.for('discourse-link-archiver.print-markers')"

MARK_JS = f"""() => {{
  const replaced = 'img,svg,video,audio,canvas,iframe,object,embed,picture,math,'
    + 'input,select,textarea,button';
  const changed = [];
  for (const li of document.querySelectorAll('li')) {{
    const style = getComputedStyle(li);
    if (style.display !== 'list-item' || style.listStylePosition !== 'outside') continue;
    if (li.innerText.trim() || li.querySelector(replaced)) continue;
    changed.push([li, li.getAttribute('style')]);
    li.style.setProperty('list-style-position', 'inside', 'important');
  }}
  window[{KEY}] = changed;
  return changed.length;
}}"""

UNMARK_JS = f"""() => {{
  const changed = window[{KEY}] || [];
  for (const [li, style] of changed) {{
    // reading the attribute first writes the CSSOM change into it: removed unread, Chromium
    // wrote it back later as style=""
    li.getAttribute('style');
    if (style === null) li.removeAttribute('style');
    else li.setAttribute('style', style);
  }}
  delete window[{KEY}];
  return changed.length;
}}"""
