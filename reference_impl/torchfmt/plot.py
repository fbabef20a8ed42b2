"""``torchfmt inspect --plot FILE``: where the bytes go, as a bar chart (spec/inspect.md#inspect-plot).

Drawn with matplotlib (the optional extra ``plot``) from the JSON report's ``bytes`` member alone: one
bar per field of each role, largest first, coloured by role, the part of each bar no view reaches
hatched; the bytes outside storages are one grey bar.  The format follows the file's suffix (``.svg``,
``.png``, ``.pdf``).
"""

from __future__ import annotations

import collections
import os
import textwrap
from typing import Any

#: Bars drawn at most; the rest are summed into one.
BARS = 15


def bars(b: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """``(label, role, bytes, unreachable bytes)`` per (role, field), largest first, at most
    :data:`BARS`, then the rest and the bytes outside storages."""
    total: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for s in b["storages"]:
        row = total[(s["role"], s["field"])]
        row[0] += s["bytes"]
        row[1] += s["unreachable_bytes"]
    rows = sorted(((f"{field}  ({role})", role, n, u) for (role, field), (n, u) in total.items()),
                  key=lambda r: -r[2])
    out = rows[:BARS]
    rest = rows[BARS:]
    if rest:
        out.append((f"{len(rest)} more fields", "other", sum(r[2] for r in rest), sum(r[3] for r in rest)))
    out.append(("everything but storage data", "", b["other_bytes"], 0))
    return out


def plot(report: dict[str, Any], path: str) -> None:
    """Write the chart of ``report`` (a read file's report) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from .inspect import human_bytes
    from .roles import ROLES

    b = report["bytes"]
    rows = bars(b)[::-1]
    colours = {r.name: plt.get_cmap("tab10")(i) for i, r in enumerate(ROLES)}
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.38 * len(rows)))
    y = range(len(rows))
    widths = [r[2] for r in rows]
    ax.barh(y, widths, color=[colours.get(r[1], (0.6, 0.6, 0.6, 1.0)) for r in rows])
    ax.barh(y, [r[3] for r in rows], left=[r[2] - r[3] for r in rows], color="white", alpha=0.55,
            hatch="//", edgecolor="black", linewidth=0)
    ax.set_yticks(list(y), [r[0] for r in rows])
    top = max(widths, default=0) or 1
    for i, r in enumerate(rows):
        share = r[2] / b["file_bytes"] if b["file_bytes"] else 0
        note = f"  {human_bytes(r[2])}  {100 * share:.1f}%"
        if r[3]:
            note += f"  ({human_bytes(r[3])} unreachable)"
        ax.text(r[2] + top * 0.01, i, note, va="center", fontsize=8)
    ax.set_xlim(0, top * 1.45)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: human_bytes(int(x))))
    title = f"{os.path.basename(report['path'])}: {human_bytes(report['file_bytes'])}"
    if b.get("headline"):
        title += "\n" + "\n".join(textwrap.wrap(b["headline"], 110))
    ax.set_title(title, fontsize=9, loc="left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
