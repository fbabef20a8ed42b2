"""Run pickle scanners and torch's safe loader over every adversarial case; write SCANNERS.md.

``python -m conformance.scanners`` runs, for each ``conformance/cases/*/adv-*`` case: picklescan,
fickling, modelscan (each as a subprocess in a throwaway folder, under a time and memory limit) and
``torch.load(weights_only=True)`` (conformance/generators/adversarial/torchcheck.py: a forked child of a
sandboxed worker).  It installs nothing: install the tools first with
``pip install picklescan fickling modelscan`` (torch from the project's ``[torch]`` extra).  A tool that
is missing is reported as such.  The table is a finding for the tools' users, not a target to tune.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import yaml

from conformance.generators.adversarial import families, torchcheck

HERE = Path(__file__).resolve().parent


CASES = HERE / "cases"
OUT = HERE / "SCANNERS.md"
BIN = Path(sys.executable).parent
TIME_LIMIT = 120
MEMORY_LIMIT = 4 << 30
TOOLS = ("picklescan", "fickling", "modelscan", "torch")
#: fickling's severities, mildest first; a clean torch-written zip scores LIKELY_UNSAFE (it imports
#: torch._utils), so only a worse severity counts as caught.
FICKLING_ORDER = (
    "LIKELY_SAFE",
    "POSSIBLY_UNSAFE",
    "SUSPICIOUS",
    "LIKELY_UNSAFE",
    "LIKELY_OVERTLY_MALICIOUS",
    "OVERTLY_MALICIOUS",
)
FICKLING_SCRIPT = r"""
import json, sys, zipfile, fickling
path = sys.argv[1]
try:
    if zipfile.is_zipfile(path):
        results = list(fickling.scan_zip_archive(path, graceful=True).values())
    else:
        results = [fickling.scan_file(path, graceful=True)]
    sev = [r.severity.name for r in results]
    errors = sum(len(getattr(r, "errors", []) or []) for r in results)
    print(json.dumps({"severities": sev, "errors": errors}))
except BaseException as e:
    print(json.dumps({"exception": f"{type(e).__name__}: {str(e)[:120]}"}))
"""


def _limits() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _run(argv: list[str], work: Path) -> subprocess.CompletedProcess[bytes] | None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "TMPDIR": str(work),
        "OMP_NUM_THREADS": "1",
    }
    try:
        return subprocess.run(
            argv,
            cwd=work,
            env=env,
            capture_output=True,
            timeout=TIME_LIMIT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_limits,
        )
    except subprocess.TimeoutExpired:
        return None


def picklescan(path: Path, work: Path) -> tuple[str, str]:
    p = _run([str(BIN / "picklescan"), "--path", str(path)], work)
    if p is None:
        return "error", "timeout"
    text = (p.stdout + p.stderr).decode(errors="replace")
    # exit 1 is picklescan's verdict (dangerous globals) only after its summary: an uncaught exception
    # (a MemoryError on adv-zip-deflate-bomb) also exits 1, and that is an error, not a catch
    if p.returncode == 1 and "SCAN SUMMARY" in text:
        found = [ln.split(": ", 1)[-1] for ln in text.splitlines() if "FOUND" in ln]
        return "caught", "; ".join(found)[:80]
    if p.returncode == 0:
        return "missed", ""
    return "error", (text.strip().splitlines() or [""])[-1][:80]


def fickling(path: Path, work: Path, baseline: str) -> tuple[str, str]:
    p = _run([sys.executable, "-c", FICKLING_SCRIPT, str(path)], work)
    if p is None:
        return "error", "timeout"
    try:
        r = json.loads(p.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return "error", f"status {p.returncode}"
    if "exception" in r:
        return "error", r["exception"][:80]
    if not r["severities"]:
        return "error", "no pickle scanned"
    worst = max(r["severities"], key=FICKLING_ORDER.index)
    if FICKLING_ORDER.index(worst) > FICKLING_ORDER.index(baseline):
        return "caught", worst
    return ("error" if r["errors"] else "missed"), worst + (
        f", {r['errors']} parse errors" if r["errors"] else ""
    )


def modelscan(path: Path, work: Path) -> tuple[str, str]:
    report = work / "modelscan.json"
    p = _run([str(BIN / "modelscan"), "-p", str(path), "-r", "json", "-o", str(report)], work)
    if p is None:
        return "error", "timeout"
    try:
        r = json.loads(report.read_text())
    except (OSError, ValueError):
        return "error", f"status {p.returncode}, no report"
    finally:
        report.unlink(missing_ok=True)
    if r.get("issues"):
        return "caught", "; ".join(f"{i.get('module')}.{i.get('operator')}" for i in r["issues"])[:80]
    if r.get("errors"):
        return "error", str(r["errors"][0].get("description", r["errors"][0]))[:80]
    if not r.get("summary", {}).get("scanned", {}).get("total_scanned"):
        return "error", "nothing scanned (format not recognised)"
    return "missed", ""


def versions() -> dict[str, str]:
    out = {}
    for tool in ("picklescan", "fickling", "modelscan", "torch"):
        try:
            out[tool] = metadata.version(tool)
        except metadata.PackageNotFoundError:
            out[tool] = "not installed"
    return out


def adversarial_cases() -> list[tuple[str, Path, dict]]:
    out = []
    for yml in sorted(CASES.glob("*/adv-*/case.yaml")):
        meta = yaml.safe_load(yml.read_text(encoding="utf-8"))
        out.append((meta["id"], yml.parent / meta["file"], meta))
    return out


def expected(meta: dict) -> str:
    if meta.get("category") == "accept":
        return "accept"
    exp = meta.get("expect", {})
    codes = [exp["error"]] if "error" in exp else exp.get("errors", [])
    return ("impl: " if meta.get("category") == "impl" else "") + " / ".join(codes)


def family(meta: dict) -> str:
    """The adversarial family whose generator wrote the case (its provenance names the module)."""
    module = str((meta.get("provenance") or {}).get("generator", "")).rsplit("/", 1)[-1]
    return families.MODULES.get(module, module or "unknown")


def fickling_baseline(work: Path) -> str:
    """fickling's severity for a clean zip that torch writes (two float tensors)."""
    from conformance.generators.adversarial import rawzip, sources

    clean = work / "clean.pt"
    clean.write_bytes(rawzip.build(sources.zip_members()))
    status, detail = fickling(clean, work, "OVERTLY_MALICIOUS")
    return (
        detail.split(",")[0]
        if detail in FICKLING_ORDER or detail.split(",")[0] in FICKLING_ORDER
        else "LIKELY_UNSAFE"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only cases whose id contains this text")
    args = ap.parse_args(argv)
    cases = [c for c in adversarial_cases() if args.k in c[0]]
    vers = versions()
    results: dict[str, dict[str, tuple[str, str]]] = {cid: {} for cid, _, _ in cases}
    work = Path(tempfile.mkdtemp(prefix="torchfmt-scanners-"))
    try:
        baseline = fickling_baseline(work) if vers["fickling"] != "not installed" else "LIKELY_UNSAFE"
        for cid, path, _ in cases:
            row = results[cid]
            row["picklescan"] = (
                picklescan(path, work) if vers["picklescan"] != "not installed" else ("n/a", "")
            )
            row["fickling"] = (
                fickling(path, work, baseline) if vers["fickling"] != "not installed" else ("n/a", "")
            )
            row["modelscan"] = modelscan(path, work) if vers["modelscan"] != "not installed" else ("n/a", "")
            print(cid, {k: v[0] for k, v in row.items()}, flush=True)
        pt = {cid: path.read_bytes() for cid, path, meta in cases if meta["format"].startswith("pt-")}
        if vers["torch"] != "not installed":
            for cid, v in torchcheck.check(pt).items():
                t = v["True"]
                died = "died" in t.detail
                results[cid]["torch"] = (
                    "error" if died else "missed" if t.loads else "caught",
                    "" if t.loads else t.detail[:80],
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    OUT.write_text(render(cases, results, vers, baseline), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


def render(
    cases: list[tuple[str, Path, dict]],
    results: dict[str, dict[str, tuple[str, str]]],
    vers: dict[str, str],
    baseline: str,
) -> str:
    fams = sorted({family(m) for _, _, m in cases})
    lines = [
        "# Scanners over the adversarial cases",
        "",
        "Generated by `python -m conformance.scanners` (do not edit): picklescan, fickling, modelscan and "
        "`torch.load(weights_only=True)` run over every `conformance/cases/*/adv-*` case, each in a "
        "sandboxed subprocess. A finding for the tools' users, not a target to tune.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()) + ".",
        "Install the scanners with `pip install picklescan fickling modelscan`.",
        "",
        "Legend:",
        "- **caught**: the tool flags the file (picklescan: exit status 1, a dangerous or suspicious global; "
        f"fickling: a severity worse than `{baseline}`, the severity it gives a clean torch-written zip; "
        "modelscan: at least one issue; torch: `weights_only=True` refuses to load it).",
        "- **missed**: the tool reports the file clean (torch: loads it).",
        "- **error**: the tool failed, timed out, or scanned nothing (for a malformed file this may still "
        "keep a user safe, but it is not a verdict); **n/a**: the tool is not installed. .t7 files are "
        "outside every scanner's scope and outside torch.load's: they are listed for completeness.",
        "- **spec**: the error code(s) the spec requires (`impl`: accept or reject are both right; "
        "`accept`: a hostile but valid file torch loads, which a scanner is right to pass).",
        "",
        "## Summary (caught / missed / error)",
        "",
        "| family | cases | " + " | ".join(TOOLS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in TOOLS) + " |",
    ]
    for fam in fams:
        ids = [c for c, _, m in cases if family(m) == fam]
        cells = []
        for tool in TOOLS:
            got = [results[c].get(tool, ("n/a", ""))[0] for c in ids]
            cells.append(f"{got.count('caught')} / {got.count('missed')} / {got.count('error')}")
        lines.append(f"| {fam} | {len(ids)} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Every case",
        "",
        "| case | spec | " + " | ".join(TOOLS) + " |",
        "| --- | --- | " + " | ".join("---" for _ in TOOLS) + " |",
    ]
    for cid, _, meta in cases:
        cells = []
        for tool in TOOLS:
            status, detail = results[cid].get(tool, ("n/a", ""))
            detail = detail.replace("|", "\\|").replace("\n", " ")
            cells.append(f"{status}" + (f" ({detail})" if detail and status != "missed" else ""))
        lines.append(f"| `{cid}` | {expected(meta)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
