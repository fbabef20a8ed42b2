"""The shape of a description document (spec/canonical.md#canonical-document), checked for every
accepted answer before it is judged.

The comparator measures an answer against an expected description; a case that fixes none (an impl case
torch's loader leaves open) has nothing to measure against, and ``{}`` passed it.  What the document
itself requires is checked here instead, for every accepted run in both modes: exactly the members the
spec names besides notes, each of its JSON type, every top-level object a VALUE and every storage
record a JSON object.  The records' and values' contents are the comparison's business
(harness/compare.py).
"""

from __future__ import annotations

from typing import Any

from .compare import VERSION, VERSION_KEY
from .vocabulary import FORMATS

#: The members a description has besides notes (names starting with ``_``), and whether one is required.
MEMBERS = {VERSION_KEY: False, "format": True, "objects": True, "storages": True}


def document_problems(doc: Any, unexpressed: frozenset[str] = frozenset()) -> list[str]:
    """What keeps ``doc`` from being a description document; empty when it is one.  A member the reader's
    adapter names ``unexpressed`` (harness/readers.py: ``storages`` for a reader with no storages) may be
    absent, as the comparison skips it."""
    if not isinstance(doc, dict):
        return ["the description is not a JSON object"]
    problems = [f"no {name!r} member" for name, required in MEMBERS.items()
                if required and name not in doc and name not in unexpressed]
    extra = sorted(k for k in doc if k not in MEMBERS and not k.startswith("_"))
    if extra:
        problems.append(f"members the document does not define: {extra}")
    if VERSION_KEY in doc and (type(doc[VERSION_KEY]) is not int or doc[VERSION_KEY] != VERSION):
        problems.append(f"{VERSION_KEY} {str(doc[VERSION_KEY])[:60]}, not {VERSION}")
    if "format" in doc and doc["format"] not in FORMATS:
        problems.append(f"format {str(doc['format'])[:60]!r} is none of {', '.join(FORMATS)}")
    objects = doc.get("objects", [])
    if not isinstance(objects, list):
        problems.append("objects is not a JSON array")
    else:
        bad = [i for i, v in enumerate(objects)
               if not (isinstance(v, dict) and isinstance(v.get("type"), str))]
        if bad:
            problems.append(f"objects {bad[:5]} are not VALUEs (a JSON object with a string type)")
    storages = doc.get("storages", {})
    if not isinstance(storages, dict):
        problems.append("storages is not a JSON object")
    else:
        bad_ids = [k for k, v in storages.items() if not isinstance(v, dict)]
        if bad_ids:
            problems.append(f"storages {bad_ids[:5]} are not STORAGE records (JSON objects)")
    return problems
