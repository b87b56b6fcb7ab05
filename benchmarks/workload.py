"""A deterministic synthetic extraction workload: schemas, gold objects and perturbed model outputs.

Three document families (orders, clinical notes, trips) with nested objects,
arrays of objects, arrays of scalars, enums, numbers, booleans and nullable
fields. Outputs are raw JSON text, perturbed the way models err: case and
whitespace changes, truncated or padded strings, wrong numbers, missing and
invented fields, dropped and extra array elements, a few unparseable or
schema-invalid outputs. The same seed gives the same workload everywhere.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

WORDS = [
    "alpha",
    "bravo",
    "cedar",
    "delta",
    "ember",
    "falcon",
    "garnet",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lumen",
    "maple",
    "nectar",
    "onyx",
    "pepper",
    "quartz",
    "raven",
    "sierra",
    "tundra",
    "umber",
    "violet",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "north",
    "river",
    "stone",
    "field",
]

ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "customer": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string"},
                "address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"},
                        "zip": {"type": ["string", "null"]},
                    },
                    "required": ["city"],
                },
            },
            "required": ["name"],
        },
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "name": {"type": "string"},
                    "qty": {"type": "integer"},
                    "price": {"type": "number"},
                    "backorder": {"type": "boolean"},
                },
                "required": ["sku", "qty"],
            },
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "status": {"enum": ["paid", "pending", "refunded"]},
        "total": {"type": "number"},
        "notes": {"type": ["string", "null"]},
    },
    "required": ["order_id", "items"],
}

CLINICAL_SCHEMA = {
    "type": "object",
    "properties": {
        "patient": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer"},
                "sex": {"enum": ["female", "male", "other"]},
            },
            "required": ["name"],
        },
        "diagnosis": {"type": "string"},
        "medications": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "dose_mg": {"type": "number"},
                    "frequency": {"type": "string"},
                },
            },
        },
        "allergies": {"type": "array", "items": {"type": "string"}},
        "follow_up": {"type": "boolean"},
    },
    "required": ["patient", "diagnosis"],
}

TRIP_SCHEMA = {
    "type": "object",
    "properties": {
        "traveler": {"type": "string"},
        "flights": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "from": {"type": "string"},
                    "to": {"type": "string"},
                    "number": {"type": "string"},
                    "seat": {"type": ["string", "null"]},
                },
            },
        },
        "hotel": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "nights": {"type": "integer"}, "rate": {"type": "number"}},
        },
        "budget": {"type": "number"},
    },
    "required": ["traveler"],
}


def _phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).title()


def _order(rng: random.Random) -> dict[str, Any]:
    items = [
        {
            "sku": f"SKU-{rng.randrange(10000):04d}",
            "name": _phrase(rng, 2),
            "qty": rng.randint(1, 9),
            "price": round(rng.uniform(1, 300), 2),
            "backorder": rng.random() < 0.2,
        }
        for _ in range(rng.randint(2, 5))
    ]
    return {
        "order_id": f"ORD-{rng.randrange(10**6):06d}",
        "customer": {
            "name": _phrase(rng, 2),
            "email": f"{rng.choice(WORDS)}@example.com",
            "address": {
                "street": f"{rng.randint(1, 999)} {_phrase(rng, 2)} Street",
                "city": _phrase(rng, 1),
                "zip": None if rng.random() < 0.3 else f"{rng.randrange(10**5):05d}",
            },
        },
        "items": items,
        "tags": rng.sample(WORDS, rng.randint(1, 4)),
        "status": rng.choice(["paid", "pending", "refunded"]),
        "total": round(sum(i["qty"] * i["price"] for i in items), 2),
        "notes": None if rng.random() < 0.5 else _phrase(rng, 5),
    }


def _clinical(rng: random.Random) -> dict[str, Any]:
    return {
        "patient": {"name": _phrase(rng, 2), "age": rng.randint(1, 95), "sex": rng.choice(["female", "male", "other"])},
        "diagnosis": _phrase(rng, 3),
        "medications": [
            {"name": _phrase(rng, 1), "dose_mg": rng.choice([5, 10, 20, 50, 250, 500]), "frequency": "twice daily"}
            for _ in range(rng.randint(1, 3))
        ],
        "allergies": rng.sample(WORDS, rng.randint(0, 3)),
        "follow_up": rng.random() < 0.5,
    }


def _trip(rng: random.Random) -> dict[str, Any]:
    return {
        "traveler": _phrase(rng, 2),
        "flights": [
            {
                "from": rng.choice(WORDS).upper()[:3],
                "to": rng.choice(WORDS).upper()[:3],
                "number": f"XB{rng.randint(100, 999)}",
                "seat": None if rng.random() < 0.4 else f"{rng.randint(1, 40)}C",
            }
            for _ in range(rng.randint(1, 3))
        ],
        "hotel": {
            "name": _phrase(rng, 2) + " Hotel",
            "nights": rng.randint(1, 9),
            "rate": round(rng.uniform(60, 400), 2),
        },
        "budget": float(rng.randrange(500, 5000, 50)),
    }


FAMILIES = ((ORDER_SCHEMA, _order), (CLINICAL_SCHEMA, _clinical), (TRIP_SCHEMA, _trip))


def _leaf_paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaf_paths(child, path + (key,))
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        for index, child in enumerate(value):
            yield from _leaf_paths(child, path + (index,))
    else:
        yield path


def _get_parent(root: Any, path: tuple) -> tuple[Any, Any]:
    node = root
    for step in path[:-1]:
        node = node[step]
    return node, path[-1]


def _perturb(rng: random.Random, gold: dict[str, Any]) -> str:
    roll = rng.random()
    if roll < 0.03:  # unparseable: cut mid-way, as a truncated generation
        text = json.dumps(gold)
        return text[: rng.randint(1, len(text) - 1)]
    output = copy.deepcopy(gold)
    if roll < 0.05:  # schema-invalid: a required key removed
        output.pop(next(iter(output)))
        return json.dumps(output)
    if roll < 0.50:
        return json.dumps(output)
    leaves = [p for p in _leaf_paths(output) if p]
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(leaves)
        parent, key = _get_parent(output, path)
        if isinstance(parent, list) or key not in parent:
            continue
        value = parent[key]
        kind = rng.random()
        if isinstance(value, str) and kind < 0.6:
            parent[key] = rng.choice([value.upper(), f"  {value} ", value.split()[0], value + " " + rng.choice(WORDS)])
        elif isinstance(value, bool):
            parent[key] = not value
        elif isinstance(value, (int, float)) and kind < 0.6:
            parent[key] = type(value)(value * rng.choice([0.9, 1.1, 2])) if value else 1
        elif isinstance(value, list) and value and not isinstance(value[0], dict):
            parent[key] = value[1:] + [rng.choice(WORDS)]
        elif kind < 0.8:
            del parent[key]
        else:
            parent[key + "_guess"] = _phrase(rng, 2)
    if rng.random() < 0.15:
        arrays = [k for k, v in output.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
        if arrays:
            key = rng.choice(arrays)
            if rng.random() < 0.5:
                output[key] = output[key][:-1]
            else:
                output[key].append(copy.deepcopy(output[key][0]))
    return json.dumps(output)


def _mistype(value: Any, rng: random.Random) -> Any:
    """The value with a JSON type its schema does not allow, as weak models write it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value} units" if rng.random() < 0.5 else str(value)
    if isinstance(value, str):
        return {"value": value} if rng.random() < 0.3 else len(value)
    if isinstance(value, list):
        return ", ".join(map(str, value))
    if isinstance(value, dict):
        return json.dumps(value)
    return "unknown"


def _perturb_harsh(rng: random.Random, gold: dict[str, Any]) -> str:
    """A weak model's output: ~10% truncated, ~80% schema-invalid (wrong types), the rest as ``_perturb``."""
    roll = rng.random()
    if roll < 0.10:  # the generation stopped at max_tokens
        text = json.dumps(gold)
        return text[: rng.randint(1, len(text) - 1)]
    if roll >= 0.90:
        return _perturb(rng, gold)
    output = copy.deepcopy(gold)
    leaves = [p for p in _leaf_paths(output) if p]
    for _ in range(rng.randint(1, 4)):
        parent, key = _get_parent(output, rng.choice(leaves))
        if not isinstance(parent, list) and key in parent:
            parent[key] = _mistype(parent[key], rng)
    required = [key for key, value in output.items() if isinstance(value, (dict, list))]
    if rng.random() < 0.3 and required:  # a whole subtree in the wrong shape
        key = rng.choice(required)
        output[key] = _mistype(output[key], rng)
    return json.dumps(output)


def with_alignment(schema: Any, align: Any, *, scalar_arrays: bool = True) -> Any:
    """A copy of ``schema`` whose arrays carry ``"x-eval-align": align`` (arrays of scalars too, unless told)."""
    if isinstance(schema, dict):
        out = {key: with_alignment(value, align, scalar_arrays=scalar_arrays) for key, value in schema.items()}
        if schema.get("type") == "array" and (scalar_arrays or schema.get("items", {}).get("type") == "object"):
            out["x-eval-align"] = align
        return out
    if isinstance(schema, list):
        return [with_alignment(value, align, scalar_arrays=scalar_arrays) for value in schema]
    return schema


def make_workload(
    n: int = 10_000, seed: int = 20261122, *, align: Any = None, scalar_arrays: bool = True, harsh: bool = False
) -> list[tuple[str, Any, dict[str, Any], str]]:
    """``n`` rows of ``(sample_id, gold, schema, raw_output)``; ``align`` annotates every array's alignment.

    ``harsh`` perturbs like a weak model: about 90% of outputs truncated or violating their schema.
    """
    perturb = _perturb_harsh if harsh else _perturb
    rng = random.Random(seed)
    families = FAMILIES
    if align is not None:
        families = tuple(
            (with_alignment(schema, align, scalar_arrays=scalar_arrays), make) for schema, make in FAMILIES
        )
    rows = []
    for i in range(n):
        schema, make = families[i % len(families)]
        gold = make(rng)
        rows.append((f"s{i:05d}", gold, schema, perturb(rng, gold)))
    return rows
