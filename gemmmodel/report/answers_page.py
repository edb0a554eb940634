"""The answers page (reports/answers.html): each question with its generated answer and
its table (gemmmodel.answers)."""

from __future__ import annotations

from pathlib import Path

TITLE = "gemmmodel: answers to the eight questions"


def answers_html(answers: list[dict], title: str = TITLE) -> str:
    from gemmmodel.report import _commit
    from gemmmodel.report import html as h

    sections = []
    for a in answers:
        paras = "".join(f"<p>{h.esc(p)}</p>" for p in a["answer"])
        table = h.table(a["table"][0], a["table"][1:]) if len(a["table"]) > 1 else ""
        sections.append(f"<h2>{a['id']}. {h.esc(a['question'])}</h2>{paras}{table}")
    return h.page(title, sections, _commit())


def write_answers(answers: list[dict], path) -> Path:
    from gemmmodel.report import write_page

    return write_page(Path(path), answers_html(answers))
