"""Party lists the way contracts write them, scored as written and with string-list similarity and normalisers.

    python benchmarks/bench_party_lists.py [--contracts 12] [--keep DIR]

Kleister NDA's gold lists each party in a normalised form (``Newgistics Inc``) while the contract
writes ``NEWGISTICS, INC., a Delaware corporation``. Kleister itself is not reachable from this
machine, so this writes short NDA-style contracts whose parties are written as contracts write them
(capitals, commas before the suffix, ``L.L.C.``, a trailing description) with the gold in that
normalised form, asks the embedded default model once (``--extractbench-record``), and re-scores the
recorded answers offline (``--extractbench-replay``) four ways: as written, with
``--extractbench-list-similarity 0.8``, with ``--extractbench-normalise no_punctuation,no_legal_suffix``
and with both. It prints the party field's F1 in the three modes for each.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_runs import extractbench_command

# (how the contract writes it, the normalised gold)
_PARTIES = (
    ("NORTHWIND ANALYTICS LTD., a company registered in England", "Northwind Analytics Ltd"),
    ("Bluefield Robotics, Inc., a Delaware corporation", "Bluefield Robotics Inc"),
    ("HARBOR LANE CAPITAL, L.L.C.", "Harbor Lane Capital LLC"),
    ("Quartz Medical GmbH", "Quartz Medical GmbH"),
    ("Silverline Logistics, PLC", "Silverline Logistics PLC"),
    ("ASTER BIOTECH CORP.", "Aster Biotech Corp"),
    ("Kestrel Energy, S.A.", "Kestrel Energy SA"),
    ("Maple Ridge Foods, Inc.", "Maple Ridge Foods Inc"),
    ("Newgistics, Inc., a Delaware corporation", "Newgistics Inc"),
    ("Bright Horizons Family Solutions, LLC", "Bright Horizons Family Solutions LLC"),
    ("John R. Whitfield, an individual", "John R. Whitfield"),
    ("CEDAR & PINE HOLDINGS, LP", "Cedar & Pine Holdings LP"),
)
SCHEMA = {
    "type": "object",
    "properties": {
        "parties": {"type": "array", "items": {"type": "string"}, "description": "The parties to the agreement"},
        "effective_date": {"type": "string"},
    },
    "required": ["parties", "effective_date"],
}
RUNS = (
    ("as written", []),
    ("list similarity 0.8", ["--extractbench-list-similarity", "0.8"]),
    ("normalisers", ["--extractbench-normalise", "no_punctuation,no_legal_suffix"]),
    ("both", ["--extractbench-list-similarity", "0.8", "--extractbench-normalise", "no_punctuation,no_legal_suffix"]),
)


def contract(index: int, rng: random.Random) -> dict[str, Any]:
    parties = rng.sample(_PARTIES, rng.choice((2, 2, 3)))
    date = f"{rng.choice(('March', 'June', 'October'))} {rng.randint(1, 28)}, {rng.randint(2015, 2024)}"
    names = " and ".join(f'{written} ("Party {chr(65 + k)}")' for k, (written, _) in enumerate(parties))
    text = (
        f"MUTUAL NON-DISCLOSURE AGREEMENT\n\nThis Agreement is made as of {date} by and between {names}.\n\n"
        "1. Confidential Information. Each party may disclose information to the other for the purpose of "
        "evaluating a possible business relationship.\n2. Obligations. The recipient shall hold such information "
        "in confidence and use it solely for that purpose.\n3. Term. This Agreement remains in force for three "
        "years.\n\nIN WITNESS WHEREOF the parties have signed this Agreement.\n"
        + "\n".join(written.split(",")[0].upper() + "\nBy: ____________" for written, _ in parties)
    )
    gold = {"parties": [normalised for _, normalised in parties], "effective_date": date}
    return {"id": f"nda-{index:02d}", "text": text, "schema": json.dumps(SCHEMA), "item": json.dumps(gold)}


def party_f1(run_dir: Path) -> dict[str, float]:
    document = json.loads((run_dir / "metrics.json").read_text())
    (model,) = document["models"].values()
    by_name = model["field_metrics_by_name"]
    key = next(k for k in by_name if k.startswith("parties"))
    return {mode: by_name[key][f"f1_{mode}"] for mode in ("strict", "partial", "lenient")}


def pytest_run(work: Path, output: str, extra: list[str]) -> None:
    command = extractbench_command(
        "parties.jsonl",
        output,
        "--extractbench-sla",
        "none",
        "--extractbench-no-cache",
        *extra,
    )
    result = subprocess.run(command, cwd=work, capture_output=True, text=True)
    if not (work / output / "metrics.json").is_file():
        sys.exit(f"no metrics.json; pytest said:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contracts", type=int, default=12)
    parser.add_argument("--keep", type=Path, help="keep the dataset, the recorded answers and the runs here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-parties-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        rng = random.Random(0)
        rows = [contract(i, rng) for i in range(1, args.contracts + 1)]
        (work / "parties.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
        pytest_run(work, "recorded", ["--extractbench-record", "cassette"])
        print(f"{args.contracts} contracts, {sum(len(json.loads(r['item'])['parties']) for r in rows)} gold parties")
        print("| scoring | strict F1 | partial F1 | lenient F1 |")
        print("|---|---:|---:|---:|")
        for index, (name, extra) in enumerate(RUNS):
            output = f"rescored-{index}"
            pytest_run(work, output, ["--extractbench-replay", "cassette", *extra])
            f1 = party_f1(work / output)
            print(f"| {name} | {f1['strict']:.3f} | {f1['partial']:.3f} | {f1['lenient']:.3f} |")


if __name__ == "__main__":
    main()
