"""Long documents for the context tests and benchmark: NDA-style contracts generated deterministically.

Nothing large is shipped: ``write_dataset(path, {"nda-8k": 8000, ...})`` writes a JSONL dataset in
the bundled format (id, text, schema, item) whose texts take roughly that many tokens on Gemma 3's
tokenizer (about 4.7 characters per token on this prose; the tests read exact counts from the server).
The facts to extract are stated once in the preamble; the clauses after it are filler that varies
with the seed, so no two documents share a long prefix.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

CHARS_PER_TOKEN = 4.7

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "disclosing_party": {"type": "string"},
        "receiving_party": {"type": "string"},
        "effective_date": {"type": "string"},
        "governing_law": {"type": "string"},
        "term_years": {"type": "integer"},
    },
    "required": ["disclosing_party", "receiving_party", "effective_date", "governing_law", "term_years"],
}

_COMPANIES = (
    "Northwind Analytics Ltd",
    "Bluefield Robotics Inc",
    "Harbor Lane Capital LLC",
    "Quartz Medical GmbH",
    "Silverline Logistics plc",
    "Aster Biotech Corp",
    "Kestrel Energy SA",
    "Maple Ridge Foods Inc",
)
_LAWS = ("the State of Delaware", "England and Wales", "the State of New York", "Ontario", "the Republic of Ireland")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_SUBJECTS = (
    "Confidential Information",
    "the Recipient",
    "each party",
    "the Discloser",
    "any Representative",
    "the receiving party's employees",
    "such information",
    "the Purpose",
)
_VERBS = (
    "shall not disclose",
    "shall hold in strict confidence",
    "may use solely for the Purpose",
    "shall return or destroy",
    "shall promptly notify the other party of",
    "shall protect with reasonable care",
    "shall not reverse engineer",
    "shall limit access to",
)
_OBJECTS = (
    "any technical, financial or commercial information",
    "all notes, analyses and compilations",
    "trade secrets, know-how and inventions",
    "documents marked as confidential",
    "samples and prototypes",
    "information disclosed orally and confirmed in writing within thirty days",
    "the terms of this Agreement",
    "customer lists and pricing data",
)
_CONDITIONS = (
    "except as required by law or court order",
    "unless the other party consents in writing",
    "during the term and for five years thereafter",
    "to the extent reasonably necessary",
    "subject to the exclusions in Section 2",
    "without prejudice to any other remedy",
    "provided that the Recipient gives prompt notice",
    "in accordance with applicable data protection law",
)
_HEADINGS = (
    "Definitions",
    "Obligations of the Recipient",
    "Exclusions",
    "Compelled Disclosure",
    "Return of Materials",
    "No License",
    "No Warranty",
    "Remedies",
    "Non-Solicitation",
    "Export Control",
    "Notices",
    "Assignment",
    "Severability",
    "Entire Agreement",
    "Counterparts",
)


def contract(sample_id: str, tokens: int, seed: int) -> dict[str, Any]:
    """One dataset row whose text takes about ``tokens`` tokens."""
    rng = random.Random(f"{sample_id}:{seed}")
    discloser, recipient = rng.sample(_COMPANIES, 2)
    law = rng.choice(_LAWS)
    date = f"{rng.choice(_MONTHS)} {rng.randint(1, 28)}, {rng.randint(2019, 2026)}"
    term = rng.randint(2, 7)
    preamble = (
        f'MUTUAL NON-DISCLOSURE AGREEMENT\n\nThis Non-Disclosure Agreement (the "Agreement") is entered into as of '
        f'{date} (the "Effective Date") by and between {discloser} (the "Disclosing Party") and {recipient} '
        f'(the "Receiving Party"). This Agreement shall remain in force for a term of {term} years from the '
        f"Effective Date and shall be governed by the laws of {law}.\n"
    )
    target = int(tokens * CHARS_PER_TOKEN)
    parts, size, section = [preamble], len(preamble), 1
    while size < target:
        heading = f"\n{section}. {_HEADINGS[(section - 1) % len(_HEADINGS)]}.\n"
        sentences = [
            f"{section}.{k} {rng.choice(_SUBJECTS).capitalize()} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}, "
            f"{rng.choice(_CONDITIONS)}."
            for k in range(1, rng.randint(4, 9))
        ]
        block = heading + " ".join(sentences) + "\n"
        parts.append(block)
        size += len(block)
        section += 1
    parts.append(
        f"\nIN WITNESS WHEREOF, the parties have executed this Agreement as of the Effective Date.\n"
        f"{discloser}\n{recipient}\n"
    )
    expected = {
        "disclosing_party": discloser,
        "receiving_party": recipient,
        "effective_date": date,
        "governing_law": law,
        "term_years": term,
    }
    return {
        "id": sample_id,
        "title": "Mutual NDA",
        "topic": "legal",
        "medium": "contract",
        "text": "".join(parts),
        "schema": json.dumps(SCHEMA),
        "item": json.dumps(expected),
    }


def write_dataset(path: Path, sizes: dict[str, int], seed: int = 0) -> Path:
    """A JSONL dataset with one contract per ``sample id -> approximate tokens``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for sample_id, tokens in sizes.items():
            fh.write(json.dumps(contract(sample_id, tokens, seed)) + "\n")
    return path
