"""Cost of the text sanitizer (pytest_extractbench.core.textsafe) at the sinks that call it most.

Times terminal() on a typical sample id, on a hostile one, on a 50 MB line (must cost what the
clipped part costs, not the whole line), markdown() on a model name, and a whole terminal summary
of 2,000 lines. Prints microseconds per call.

    python benchmarks/bench_textsafe.py
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_extractbench.core import textsafe  # noqa: E402


def main() -> None:
    plain_id = "invoice-2024-000123"
    hostile_id = "x\x1b[31mRED\x1b]0;title\x07\x9b2J\u202eabc" * 10
    huge_line = "{" + "A" * 50_000_000
    model = "llama-3.1-8b-instruct @org/team <b>"
    summary = "\n".join(f"  field F1 (partial)  0.{i:03d} [95% CI: 0.812, 0.834]" for i in range(2000))
    cases = [
        ("terminal(plain sample id)", lambda: textsafe.terminal(plain_id), 100_000),
        ("terminal(hostile id, 390 chars)", lambda: textsafe.terminal(hostile_id), 10_000),
        ("terminal(50 MB line)", lambda: textsafe.terminal(huge_line, textsafe.LINE_LIMIT), 200),
        ("markdown(model name)", lambda: textsafe.markdown(model), 50_000),
        ("text_lines(2,000-line summary)", lambda: textsafe.text_lines(summary), 50),
    ]
    print(f"{'call':<34} {'us/call':>12}")
    for name, call, number in cases:
        best = min(timeit.repeat(call, number=number, repeat=3)) / number
        print(f"{name:<34} {best * 1e6:>12.1f}")


if __name__ == "__main__":
    main()
