"""``torchfmt inspect --plot FILE`` and ``--treemap FILE``: where the bytes go, as a bar chart or a
treemap (spec/inspect.md#inspect-plot).

Drawn with matplotlib, the treemap laid out with squarify (both the optional extra ``plot``), from the
JSON report's ``bytes`` member alone.  The bar chart has one bar per field of each role, largest first,
coloured by role, the part of each bar no view reaches hatched; the bytes outside storages are one grey
bar.  The treemap has one rectangle per role (per top-level key beside it) holding one per field, each of
an area in proportion to its bytes, the unreachable part hatched, and names in a list beside it what is
too small to label.  The format follows the file's suffix (``.svg``, ``.png``, ``.pdf``).
"""

from __future__ import annotations

import collections
import os
import textwrap
from dataclasses import dataclass
from typing import Any

#: Bars drawn at most; the rest are summed into one.
BARS = 15


#: The label of the bytes outside storages.
OTHER_BYTES = "everything but storage data"


def fields(b: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """``(role, field, bytes, unreachable bytes)`` per (role, field) of the storages, largest first."""
    total: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for s in b["storages"]:
        row = total[(s["role"], s["field"])]
        row[0] += s["bytes"]
        row[1] += s["unreachable_bytes"]
    return sorted(((role, field, n, u) for (role, field), (n, u) in total.items()), key=lambda r: -r[2])


def bars(b: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """``(label, role, bytes, unreachable bytes)`` per (role, field), largest first, at most
    :data:`BARS`, then the rest and the bytes outside storages."""
    rows = [(f"{field}  ({role})", role, n, u) for role, field, n, u in fields(b)]
    out = rows[:BARS]
    rest = rows[BARS:]
    if rest:
        out.append((f"{len(rest)} more fields", "other", sum(r[2] for r in rest), sum(r[3] for r in rest)))
    out.append((OTHER_BYTES, "", b["other_bytes"], 0))
    return out


#: Colours of the roles (tab10 entries, in the order of ROLES), grey left for the bytes outside storages.
_TAB10 = (0, 9, 2, 4, 1, 5, 6, 3)


def _colours() -> dict[str, Any]:
    import matplotlib.pyplot as plt

    from .roles import ROLES

    return {r.name: plt.get_cmap("tab10")(_TAB10[i % len(_TAB10)]) for i, r in enumerate(ROLES)}


def _title(report: dict[str, Any]) -> str:
    from .inspect import human_bytes

    b = report["bytes"]
    title = f"{os.path.basename(report['path'])}: {human_bytes(report['file_bytes'])}"
    if b.get("headline"):
        title += "\n" + "\n".join(textwrap.wrap(b["headline"], 110))
    return title


def plot(report: dict[str, Any], path: str) -> None:
    """Write the chart of ``report`` (a read file's report) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from .inspect import human_bytes

    b = report["bytes"]
    rows = bars(b)[::-1]
    colours = _colours()
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
    ax.set_title(_title(report), fontsize=9, loc="left")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


@dataclass
class Tile:
    """A rectangle of the treemap: a group (a role, a top-level key) or a field inside one."""

    label: str
    role: str
    bytes: int
    unreachable: int
    x: float
    y: float
    dx: float
    dy: float


#: The treemap's drawing area, in the units squarify lays out (the aspect of its axes).
WIDTH, HEIGHT = 160.0, 100.0


def _squarify(values: list[int], x: float, y: float, dx: float, dy: float) -> list[dict[str, float]]:
    import squarify

    return squarify.squarify(squarify.normalize_sizes(values, dx, dy), x, y, dx, dy) if values else []


def layout(b: dict[str, Any], by: str = "role") -> tuple[list[Tile], list[Tile]]:
    """The treemap of ``b`` (a report's ``bytes``): the groups (roles, or top-level keys with ``by``
    ``"key"``, and the bytes outside storages) and the tiles inside them, each of an area in proportion
    to its bytes over the :data:`WIDTH` x :data:`HEIGHT` rectangle."""
    inner: dict[str, list[tuple[str, str, int, int]]] = collections.defaultdict(list)
    if by == "role":
        for role, field, n, u in fields(b):
            inner[role].append((field, role, n, u))
    else:
        per_key: dict[tuple[str, str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
        for s in b["storages"]:
            row = per_key[(s["path"][0], s["role"], s["field"])]
            row[0] += s["bytes"]
            row[1] += s["unreachable_bytes"]
        for (key, role, field), (n, u) in sorted(per_key.items(), key=lambda kv: -kv[1][0]):
            inner[key].append((field, role, n, u))
    if b["other_bytes"]:
        inner[OTHER_BYTES].append((OTHER_BYTES, "", b["other_bytes"], 0))
    order = sorted((g for g in inner if sum(t[2] for t in inner[g]) > 0),
                   key=lambda g: -sum(t[2] for t in inner[g]))
    sizes = [sum(t[2] for t in inner[g]) for g in order]
    groups, tiles = [], []
    for g, rect in zip(order, _squarify(sizes, 0, 0, WIDTH, HEIGHT), strict=True):
        items = [t for t in inner[g] if t[2] > 0]
        role = items[0][1] if by == "role" else ""
        groups.append(Tile(g, role, sum(t[2] for t in items), sum(t[3] for t in items), **rect))
        for (label, r, n, u), sub in zip(items, _squarify([t[2] for t in items], **rect), strict=True):
            tiles.append(Tile(label, r, n, u, **sub))
    return groups, tiles


#: A tile is labelled inside when it is at least this wide and high (layout units).
_LABEL_W, _LABEL_H = 14.0, 7.0


def treemap(report: dict[str, Any], path: str) -> None:
    """Write the treemap of ``report`` (a read file's report) to ``path``: by role and field, and by
    top-level key beside it; tiles too small to label are listed under the maps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    from .inspect import human_bytes

    b = report["bytes"]
    total = b["file_bytes"] or 1
    colours = _colours()
    grey = (0.75, 0.75, 0.75, 1.0)
    fig = plt.figure(figsize=(14, 8.2))
    grid = fig.add_gridspec(2, 2, height_ratios=[5, 2], width_ratios=[3, 2])
    unlabelled: list[Tile] = []
    for col, (by, heading) in enumerate((("role", "by role and field"), ("key", "by top-level key"))):
        ax = fig.add_subplot(grid[0, col])
        groups, tiles = layout(b, by)
        for t in tiles:
            ax.add_patch(Rectangle((t.x, t.y), t.dx, t.dy, facecolor=colours.get(t.role, grey),
                                   edgecolor="white", linewidth=0.8))
            if t.unreachable:  # the part no view reaches: a hatched slice of the tile
                w = t.dx * t.unreachable / t.bytes
                ax.add_patch(Rectangle((t.x + t.dx - w, t.y), w, t.dy, facecolor="white", alpha=0.45,
                                       hatch="//", edgecolor="black", linewidth=0))
            lines = [t.label, f"{human_bytes(t.bytes)}  {100 * t.bytes / total:.1f}%"]
            if t.unreachable:
                lines.append(f"{human_bytes(t.unreachable)} unreachable")
            if not _label(ax, t, lines) and by == "role":
                unlabelled.append(t)
        for g in groups:
            ax.add_patch(Rectangle((g.x, g.y), g.dx, g.dy, fill=False, edgecolor="black", linewidth=1.6))
            if by == "key":
                _label(ax, g, [g.label], corner=True)
        ax.set_xlim(0, WIDTH)
        ax.set_ylim(0, HEIGHT)
        ax.set_axis_off()
        ax.set_title(heading, fontsize=9, loc="left")
    used = [r for r in colours if any(r == t.role for t in layout(b)[1])]
    handles = [Patch(facecolor=colours[r], label=r) for r in used]
    handles.append(Patch(facecolor="white", hatch="//", edgecolor="black", label="saved but unreachable"))
    if b["other_bytes"]:
        handles.append(Patch(facecolor=grey, label=OTHER_BYTES))
    legend = fig.add_subplot(grid[1, 1])
    legend.set_axis_off()
    legend.legend(handles=handles, loc="upper left", fontsize=8, frameon=False, title="roles",
                  title_fontsize=9)
    small = fig.add_subplot(grid[1, 0])
    small.set_axis_off()
    if unlabelled:
        lines = [f"{t.label}  ({t.role or '-'})  {human_bytes(t.bytes)}  {100 * t.bytes / total:.2f}%"
                 + (f"  ({human_bytes(t.unreachable)} unreachable)" if t.unreachable else "")
                 for t in sorted(unlabelled, key=lambda t: -t.bytes)[:2 * _SMALL_ROWS]]
        more = len(unlabelled) - len(lines)
        if more > 0:
            lines.append(f"... and {more} more")
        small.set_title("too small to label", fontsize=9, loc="left")
        for i, chunk in enumerate((lines[:_SMALL_ROWS], lines[_SMALL_ROWS:])):
            small.text(0.5 * i, 1.0, "\n".join(chunk), va="top", ha="left", fontsize=8,
                       transform=small.transAxes, family="monospace")
    fig.suptitle(_title(report), fontsize=10, x=0.01, ha="left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _label(ax: Any, t: Tile, lines: list[str], corner: bool = False) -> bool:
    """Write ``lines`` in the tile ``t`` across it when it is wide enough, else along it when it is
    tall enough (as many lines as fit), cut at the tile's edges; ``corner``: one bold line in the lower
    right corner of a tile wide enough.  Whether anything was written."""
    from matplotlib.patches import Rectangle

    kw: dict[str, Any] = {"fontsize": 8, "clip_on": True}
    if corner:
        kw.update(fontsize=9, fontweight="bold")
    fit = int(t.dx // 3.2)
    if t.dx >= _LABEL_W and t.dy >= _LABEL_H * (2 if corner else 1):
        if corner:
            text = ax.text(t.x + t.dx - 1, t.y + 1, lines[0], va="bottom", ha="right", **kw)
        else:
            text = ax.text(t.x + 1, t.y + t.dy - 1, "\n".join(lines), va="top", ha="left", **kw)
    elif t.dy >= _LABEL_W and fit and not corner:
        text = ax.text(t.x + 0.6, t.y + t.dy - 1, "\n".join(lines[:fit]), va="top", ha="left",
                       rotation=90, **kw)
    else:
        return False
    clip = Rectangle((t.x, t.y), t.dx, t.dy, transform=ax.transData)
    text.set_clip_path(clip)  # a long name is cut at its tile's edge, never drawn over a neighbour
    return True


#: Rows of the list of tiles too small to label, per column (two columns).
_SMALL_ROWS = 8
