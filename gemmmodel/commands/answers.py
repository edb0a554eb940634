"""`gemmmodel answers [--gpu AMD] [--nvidia G] [-o reports/answers.html] [--json]`: the eight
user questions answered from the model and the data (gemmmodel.answers)."""

from __future__ import annotations

from gemmmodel.commands._common import add_json_flag, emit


def add_parser(sub) -> None:
    p = sub.add_parser("answers", help="answer the eight user questions from model and data",
                       description="Answers to the questions of REFERENCE.md section 1, "
                                   "generated from the model, the specs and measured data.")
    p.add_argument("--gpu", help="the AMD GPU (default mi100-1472, the seed table's MI100)")
    p.add_argument("--nvidia", help="the NVIDIA GPU (default: the calibrated one, else h200)")
    p.add_argument("--size", help="shape (default 4096x4096x4096)")
    p.add_argument("-o", "--out", default="reports/answers.html", metavar="FILE",
                   help="HTML page to write (default reports/answers.html)")
    p.add_argument("--no-compile", action="store_true", help="never run a compiler")
    add_json_flag(p)
    p.set_defaults(func=run)


def render(answers: list[dict]) -> str:
    lines = []
    for a in answers:
        lines.append(f"{a['id']}. {a['question']}")
        lines.extend(f"   {p}" for p in a["answer"])
    return "\n".join(lines)


def run(args) -> int:
    from gemmmodel.answers import answer_all
    from gemmmodel.report.answers_page import write_answers

    answers = answer_all(args.gpu, args.nvidia, args.size, allow_compile=not args.no_compile)
    path = write_answers(answers, args.out)
    payload = {"written": str(path), "answers": answers}
    return emit(args, payload, lambda p: render(p["answers"]) + f"\nwrote {p['written']}")
