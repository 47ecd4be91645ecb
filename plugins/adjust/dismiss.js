() => {
  const CONSENT = /(cookie|consent|gdpr|privacy|cmp|onetrust|didomi|qc-cmp|sp_message|banner|modal|popup|overlay|dialog|newsletter|subscribe|paywall)/i;
  const ACCEPT = /^\s*(accept|agree|allow|ok|okay|got it|i agree|i accept|accept all|allow all|close|continue|no thanks|dismiss|×|✕|x)\s*$/i;
  let clicked = 0, removed = 0;
  const label = el => (el.innerText || el.value || el.getAttribute('aria-label') || el.title || '').trim();
  const describe = el => `${el.id} ${el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className} ${el.getAttribute('role') || ''} ${el.getAttribute('aria-label') || ''}`;
  const scopes = [...document.querySelectorAll('[id],[class],[role=dialog],[aria-modal=true]')]
    .filter(el => CONSENT.test(describe(el)) || el.getAttribute('role') === 'dialog' || el.getAttribute('aria-modal') === 'true')
    .slice(0, 200);
  for (const scope of scopes) {
    for (const b of scope.querySelectorAll('button, [role=button], a, input[type=button], input[type=submit]')) {
      const text = label(b);
      if (text.length <= 30 && ACCEPT.test(text)) { try { b.click(); clicked++; } catch (e) {} break; }
    }
  }
  const vw = window.innerWidth, vh = window.innerHeight;
  for (const el of document.querySelectorAll('body *')) {
    const cs = getComputedStyle(el);
    if (cs.position !== 'fixed' && cs.position !== 'sticky') continue;
    const z = parseInt(cs.zIndex) || 0;
    const r = el.getBoundingClientRect();
    const share = (Math.max(0, Math.min(r.right, vw) - Math.max(r.left, 0)) *
                   Math.max(0, Math.min(r.bottom, vh) - Math.max(r.top, 0))) / (vw * vh);
    if ((share > 0.3 && z >= 10) || (CONSENT.test(describe(el)) && z >= 1)) { el.remove(); removed++; }
    if (removed >= 50) break;
  }
  for (const el of [document.documentElement, document.body]) {
    if (el && getComputedStyle(el).overflow === 'hidden') el.style.setProperty('overflow', 'auto', 'important');
  }
  return {clicked, removed};
}
