"""One self-contained HTML page: styles and images inline (base64 PNG), no external
resources. A small script marks on <body> how many images decoded (data-images-loaded /
data-images-total), which the browser test reads back."""

from __future__ import annotations

import html
from datetime import datetime, timezone

from gemmmodel import __version__

STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1200px; color: #222; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0 1.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #eef; } td.l, th.l { text-align: left; }
figure { margin: 1em 0; } figcaption { font-size: 12px; color: #555; max-width: 1000px; }
img { max-width: 100%; } .note { font-size: 12px; color: #555; }
"""
SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  document.body.setAttribute('data-images-total', String(imgs.length));
  document.body.setAttribute('data-images-loaded', String(ok.length));
});
"""


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def figure(png_b64: str | None, caption: str, alt: str) -> str:
    if not png_b64:
        return f'<p class="note">{esc(alt)}: no data.</p>'
    return (f'<figure><img alt="{esc(alt)}" src="data:image/png;base64,{png_b64}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def table(headers: list[str], rows: list[list], left: int = 1) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{esc(h)}</th>'
                   for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{esc(c)}</td>'
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def page(title: str, sections: list[str], commit: str = "") -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    made = f"gemmmodel {__version__}" + (f", commit {esc(commit)}" if commit else "")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>{esc(title)}</h1><p class=\"note\">Generated {stamp} by {made}. "
            "Generated output: do not edit by hand.</p>"
            + "\n".join(sections) + f"<script>{SCRIPT}</script></body></html>\n")
