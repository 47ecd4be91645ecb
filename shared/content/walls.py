"""Is a page a wall in front of the content: a login wall, a consent gate, or a challenge?

Recognised per platform (the login paths X, Instagram, TikTok, Facebook, YouTube and Reddit
redirect to, and their logged-out shells' words, `shared.platforms.registry`) and in general:
a page that is mostly a sign-in form (a password field, and little text besides the form),
a page a redirect ended on a login path, a bot challenge (Cloudflare's "Just a moment",
captchas). A capture of such a page is kept as evidence of what was served, never as the
archive of the link.

Two readers of the same signals: `signals_from_html` (raw HTML, an API answer, the rendered
DOM file) and `SIGNALS_JS`, which the navigate hook evaluates in the loaded page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import lxml.html
from lxml import etree

from shared.platforms import registry

WallReason = Literal["login_wall", "consent_wall", "blocked"]
MAX_HTML = 2_000_000
"""Characters of a page read for its signals (a wall is small; the start tells)."""
TEXT_KEPT = 4000
"""Characters of the page's text kept for the word rules."""

LOGIN_PATH = re.compile(
    r"^/(?:i/flow/(?:login|signup)|login(?:\.php)?|signin|sign-in|sign_in|log-in|"
    r"accounts/login|account/login|users/sign_in|auth/login|challenge|checkpoint|"
    r"ServiceLogin|v3/signin)(?:[/?#]|$)",
    re.I,
)
LOGIN_HOSTS = ("accounts.google.com", "login.microsoftonline.com", "login.live.com")
CONSENT_HOSTS = (*registry.CONSENT_HOSTS, "consent.google.com")
PLATFORM_WALLS: dict[str, re.Pattern[str]] = registry.WALLS
"""Words of each platform's logged-out shell (the page instead of the post), by domain."""
CHALLENGE = re.compile(
    r"just a moment\.\.\.|attention required! \| cloudflare|verify you are (a )?human|"
    r"are you a robot|checking your browser|confirm you.re not a bot|captcha",
    re.I,
)
CONSENT = re.compile(r"before you continue to|we value your privacy|consent to (the )?use of", re.I)
LOGIN_WORDS = re.compile(r"\b(log ?in|sign ?in|log on|password)\b", re.I)

SIGNALS_JS = """() => {
  const body = document.body;
  if (document.getElementsByTagName("*").length > 20000) return null;  // no wall is that big
  const text = body ? (body.innerText || "") : "";
  const fields = Array.from(document.querySelectorAll('input[type="password"]'));
  const forms = new Set(fields.map(f => f.closest("form") || f.parentElement));
  let formText = 0;
  for (const f of forms) if (f) formText += (f.innerText || "").length;
  return {title: document.title || "", text: text.slice(0, 4000), text_chars: text.length,
          password_inputs: fields.length, form_text_chars: formText, url: location.href,
          articles: document.querySelectorAll("article").length};
}"""
"""The signals of the page loaded in a browser (the navigate hook evaluates it); null for a
page of more than 20 000 elements, which is no wall (and whose text would cost a layout)."""


@dataclass(frozen=True)
class PageSignals:
    """What the rules look at."""

    url: str
    title: str
    text: str
    """The start of the page's visible text."""
    text_chars: int
    password_inputs: int
    form_text_chars: int
    """Text inside the forms holding the password fields."""
    articles: int = 0
    """`<article>` elements: a platform's logged-out shell that still shows the post (X
    shows a post in an article under its sign-up banner) is no wall."""

    @classmethod
    def of(cls, data: dict[str, Any]) -> PageSignals:
        """From SIGNALS_JS's answer (missing or odd values read as empty)."""

        def num(key: str) -> int:
            value = data.get(key)
            return int(value) if isinstance(value, int | float) else 0

        return cls(
            url=str(data.get("url") or ""),
            title=str(data.get("title") or "")[:500],
            text=str(data.get("text") or "")[:TEXT_KEPT],
            text_chars=num("text_chars"),
            password_inputs=num("password_inputs"),
            form_text_chars=num("form_text_chars"),
            articles=num("articles"),
        )


@dataclass(frozen=True)
class Wall:
    """A wall, and what gave it away."""

    reason: WallReason
    why: str


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _site(host: str) -> str | None:
    for domain in PLATFORM_WALLS:
        if host == domain or host.endswith("." + domain):
            return domain
    return None


def is_login_url(url: str) -> bool:
    """True for an address that is a login page (its path or its host)."""
    host = _host(url)
    if host in LOGIN_HOSTS:
        return True
    return bool(LOGIN_PATH.match(urlsplit(url).path or "/"))


def classify(signals: PageSignals, asked_url: str | None = None) -> Wall | None:
    """The wall a page is, or None. `asked_url`: the address asked for, so a link that *is*
    a login page is not called a wall for being one."""
    url, host = signals.url, _host(signals.url)
    head = f"{signals.title}\n{signals.text}"
    redirected = asked_url is not None and asked_url != url
    if host in CONSENT_HOSTS or (signals.text_chars < 3000 and CONSENT.search(signals.title)):
        return Wall("consent_wall", f"consent gate at {host or url}")
    if CHALLENGE.search(signals.title) or (
        signals.text_chars < 2000 and CHALLENGE.search(signals.text)
    ):
        return Wall("blocked", f"bot challenge: {signals.title[:80] or signals.text[:80]}")
    if is_login_url(url) and (redirected or asked_url is None):
        return Wall("login_wall", f"login page {urlsplit(url).path or host}")
    site = _site(host) or (_site(_host(asked_url)) if asked_url else None)
    if site is not None:
        marker = PLATFORM_WALLS[site].search(head)
        if marker and signals.text_chars < 5000 and not signals.articles:
            return Wall("login_wall", f"{site} logged-out page: {marker.group(0)!r}")
    if signals.password_inputs:
        share = signals.form_text_chars / max(1, signals.text_chars)
        if signals.text_chars < 800 or share >= 0.4:
            return Wall(
                "login_wall", f"a sign-in form is most of the page ({share:.0%} of its text)"
            )
    if signals.text_chars < 300 and LOGIN_WORDS.search(signals.title):
        return Wall("login_wall", f"a sign-in page: {signals.title[:80]!r}")
    return None


def signals_from_html(url: str, html: str) -> PageSignals:
    """The signals of an HTML page (scripts, styles and templates left out of its text)."""
    try:
        root = lxml.html.document_fromstring(html[:MAX_HTML] or "<html></html>")
    except (etree.ParserError, ValueError):
        return PageSignals(url, "", "", 0, 0, 0)
    etree.strip_elements(root, "script", "style", "noscript", "template", with_tail=False)
    title = " ".join((root.findtext(".//title") or "").split())
    body = root.find("body")
    text = " ".join((body.text_content() if body is not None else "").split())
    fields = root.xpath('.//input[@type="password"]')
    forms = {id(f): f for f in (_form_of(p) for p in fields) if f is not None}
    form_text = sum(len(" ".join(f.text_content().split())) for f in forms.values())
    articles = len(root.xpath(".//article"))
    return PageSignals(url, title, text[:TEXT_KEPT], len(text), len(fields), form_text, articles)


def _form_of(field: Any) -> Any:
    for parent in field.iterancestors():
        if parent.tag == "form":
            return parent
    return field.getparent()


def wall_in_html(url: str, html: str, asked_url: str | None = None) -> Wall | None:
    """The wall an HTML page is, or None."""
    return classify(signals_from_html(url, html), asked_url)
