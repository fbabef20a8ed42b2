"""Safe to print, safe to write (issue 26): what a file holds never reaches the terminal raw, a path that
names no regular file is refused at once by every command alike and never replaced, a catchable signal
during a write leaves no temporary behind, and a temporary a killed write left is removed by the next
write of that output only.  The honest words and statuses of the same issue are here too.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_tool_contract import left_behind, run
from torchfmt.writer.atomic import remove_stale

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "a\x1b]0;pwned\x07\x1b[2J\r\nforged line\u202eevil\u2066x\x85y"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "reference_impl"))


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "keys.pt"
    torch.save({HOSTILE: torch.zeros(3), "\ud800": torch.ones(2), "ok": torch.ones(1)}, path)
    return path


# -- safe to print --------------------------------------------------------------------------------

@pytest.mark.spec("inspect.md#inspect-text-escapes")
def test_inspect_escapes_control_bidi_and_surrogates(hostile: Path) -> None:
    """Today the keys reach the terminal raw (ESC/OSC, CR, LF, RLO), and the lone surrogate ends inspect
    with a UnicodeEncodeError traceback."""
    proc = subprocess.run([sys.executable, "-m", "torchfmt", "inspect", str(hostile)], env=_env(),
                          capture_output=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr[-500:]
    text = proc.stdout.decode("utf-8")  # strict: no surrogate could be encoded
    assert RAW.search(text) is None
    assert "forged line" in text and not any(line.startswith("forged line") for line in text.splitlines())
    assert r"a\x1b]0;pwned\x07\x1b[2J\x0d\x0aforged line\u202eevil\u2066x\x85y" in text
    assert r"\ud800: float32[2]" in text


def test_inspect_json_keeps_json_escaping(hostile: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "torchfmt", "inspect", str(hostile), "--json"], env=_env(),
                          capture_output=True, timeout=120)
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert {n["key"] for n in report["tree"][0]["children"]} == {HOSTILE, "\ud800", "ok"}


def test_colour_is_only_the_reports_own(hostile: Path) -> None:
    """With colour on, the only escape sequences are the report's SGR styles."""
    from torchfmt.tools.inspect import inspect, render

    report, _ = inspect(str(hostile))
    text = render(report, color=True)
    assert "\x1b[1m" in text
    assert set(re.findall("\x1b[^m]*m", text)) <= {"\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[33m", "\x1b[36m",
                                                   "\x1b[1;33m"}
    assert RAW.search(re.sub("\x1b\\[[0-9;]*m", "", text)) is None


def test_a_forged_style_mark_is_escaped(tmp_path: Path) -> None:
    """The private-use marks the renderer styles with cannot be used by file data to smuggle ESC."""
    from torchfmt.tools.terminal import finish, styled

    text = finish([styled("x", "1") + "\ue000\x1b[31\ue001y\ue002"], color=True)
    assert text == "\x1b[1mx\x1b[0m\\ue000\\x1b[31\\ue001y\\ue002\n"


@pytest.mark.spec("t7.md#t7-convert-refusals")
def test_a_lone_surrogate_is_refused_by_t7_by_name(hostile: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.t7"
    status, err, _ = run(["convert", str(hostile), str(out)])
    assert status == 2 and len(err) == 1 and err[0].startswith("unsupported: t7-value (")
    assert "U+D800" in err[0] and "bug" not in err[0] and not out.exists()


def test_the_one_line_of_convert_and_slim_is_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "dir\x1b[2J\u202e"
    folder.mkdir()
    src = folder / "in.pt"
    torch.save({"w": torch.randn(10_000)[:2]}, src)
    for argv in (["convert", str(src), str(folder / "o.pt")], ["slim", str(src), str(folder / "s.pt")]):
        status, err, out = run(argv)
        assert status == 0, err
        assert RAW.search(out) is None and "dir\\x1b[2J\\u202e" in out


# -- inputs that are no regular file ------------------------------------------------------------

COMMANDS = (["dump"], ["inspect"], ["inspect", "--json"], ["slim"], ["convert"])


def _argv(command: list[str], path: str, out: Path) -> list[str]:
    if command[0] in ("slim", "convert"):
        return [command[0], path, str(out)]
    return [command[0], path, *command[1:]]


@pytest.mark.spec("canonical.md#canonical-reader-input")
def test_a_fifo_is_refused_at_once_by_every_command(tmp_path: Path) -> None:
    """Today every command blocks forever in open() on a FIFO no one writes."""
    fifo = tmp_path / "in.pt"
    os.mkfifo(fifo)
    for command in COMMANDS:
        start = time.monotonic()
        argv = _argv(command, str(fifo), tmp_path / "o.pt")
        proc = subprocess.run([sys.executable, "-m", "torchfmt", *argv], env=_env(), capture_output=True,
                              text=True, timeout=60)
        assert time.monotonic() - start < 60
        assert (proc.returncode, proc.stdout) == (2, ""), (command, proc.stderr)
        assert proc.stderr == f"unsupported: not-a-regular-file (a FIFO: '{fifo}')\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.pt"]


@pytest.mark.spec("canonical.md#canonical-reader-input")
@pytest.mark.parametrize(("path", "line"), [
    ("/dev/null", "unsupported: not-a-regular-file (a character device: '/dev/null')"),
    ("/proc/self/mem", "truncated: empty file (at byte 0)"),
    ("{tmp}", "unsupported: not-a-regular-file (a directory: '{tmp}')"),
    ("{tmp}/missing.pt", "unsupported: missing-input (no such file: '{tmp}/missing.pt')"),
    ("{tmp}/missing/x.pt", "unsupported: missing-input (no such file: '{tmp}/missing/x.pt')"),
])
def test_every_command_refuses_the_same_way(tmp_path: Path, path: str, line: str) -> None:
    """/proc/self/mem was exit 2 from inspect and 1 from dump; a missing file `unreadable-path`."""
    path, line = path.format(tmp=tmp_path), line.format(tmp=tmp_path)
    want = 1 if line.startswith("truncated") else 2
    for command in COMMANDS:
        status, err, _ = run(_argv(command, path, tmp_path / "o.pt"))
        assert (status, err) == (want, [line]), command
    assert not (tmp_path / "o.pt").exists()


def test_the_api_refuses_a_fifo_too(tmp_path: Path) -> None:
    import torchfmt

    fifo = tmp_path / "x.t7"
    os.mkfifo(fifo)
    with pytest.raises(torchfmt.Unsupported, match="not-a-regular-file"):
        torchfmt.load(fifo)


# -- outputs that are no regular file -----------------------------------------------------------

@pytest.mark.spec("t7.md#t7-convert-refusals")
@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
@pytest.mark.parametrize("command", ["convert", "slim"])
def test_a_non_regular_output_is_never_replaced(tmp_path: Path, kind: str, command: str) -> None:
    """`convert --force IN NODE` replaced a FIFO or a device node with a regular file."""
    src = tmp_path / "in.pt"
    torch.save({"w": torch.randn(10_000)[:2]}, src)
    out = tmp_path / "node"
    if kind == "fifo":
        os.mkfifo(out)
    elif kind == "device":
        try:
            os.mknod(out, stat.S_IFCHR | 0o600, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("mknod needs root")
    else:
        out.mkdir()
    before = os.lstat(out)
    status, err, _ = run([command, str(src), str(out), "--force"])
    assert status == 2 and len(err) == 1 and err[0].startswith("unsupported: output-not-regular (")
    after = os.lstat(out)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    assert left_behind(tmp_path) == []


# -- signals and stale temporaries --------------------------------------------------------------

_SLOW_CHECK = r"""
import sys, time
import torchfmt.tools.convert as convert
from torchfmt.cli import main

def slow(tmp, meant, target):
    print("checking", flush=True)
    time.sleep(60)

convert.checked = slow
sys.exit(main(["convert", sys.argv[1], sys.argv[2]]))
"""

LATE = [getattr(signal, n) for n in ("SIGUSR1", "SIGUSR2", "SIGALRM", "SIGXCPU", "SIGHUP", "SIGQUIT",
                                     "SIGVTALRM", "SIGPROF")]  # SIGPIPE, SIGXFSZ: Python ignores them


@pytest.mark.spec("pt-zip.md#pt-zip-write-atomic")
@pytest.mark.parametrize("signum", LATE, ids=[signal.Signals(s).name for s in LATE])
def test_a_catchable_signal_mid_write_leaves_no_temporary(tmp_path: Path, signum: int) -> None:
    """SIGUSR1, SIGALRM and SIGXCPU (what `ulimit -t` sends) left the temporary behind."""
    src, out = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save({"w": torch.arange(10.0)}, src)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_CHECK, str(src), str(out)], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "checking"
    assert len(left_behind(tmp_path)) == 1
    proc.send_signal(signum)
    proc.wait(timeout=30)
    assert left_behind(tmp_path) == [] and not out.exists()
    assert proc.returncode == -signum  # ended by the signal, as it would have been


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.spec("pt-zip.md#pt-zip-write-atomic")
def test_a_stale_temporary_of_a_dead_writer_is_removed_and_nothing_else(tmp_path: Path) -> None:
    src, out = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save({"w": torch.arange(10.0)}, src)
    dead = _dead_pid()
    stale = tmp_path / f".out.pt.torchfmt-{dead}-0123456789abcdef.tmp"
    alive = tmp_path / ".out.pt.torchfmt-1-0123456789abcdef.tmp"  # pid 1 lives
    other = tmp_path / f".other.pt.torchfmt-{dead}-0123456789abcdef.tmp"
    foreign = tmp_path / ".out.pt.abcdef.tmp"  # not our pattern
    link = tmp_path / f".out.pt.torchfmt-{dead}-fedcba9876543210.tmp"
    for p in (stale, alive, other, foreign):
        p.write_bytes(b"x")
    link.symlink_to(src)
    status, err, _ = run(["convert", str(src), str(out)])
    assert status == 0, err
    assert not stale.exists()
    assert alive.exists() and other.exists() and foreign.exists() and link.is_symlink() and src.exists()
    assert remove_stale(out) == []


def test_a_temporary_names_its_writer(tmp_path: Path) -> None:
    from torchfmt.writer.atomic import temporary_name

    name = os.path.basename(temporary_name(str(tmp_path / "m.pt")))
    assert re.fullmatch(rf"\.m\.pt\.torchfmt-{os.getpid()}-[0-9a-f]{{16}}\.tmp", name)


# -- honest statuses and words -------------------------------------------------------------------

@pytest.mark.spec("inspect.md#inspect-cli")
def test_inspect_exits_0_once_it_read_the_file(tmp_path: Path) -> None:
    """A whole pickled model is a fact the report states: exit 0 (was 1), its refusal line not on stderr;
    --strict-status gives dump's status and line."""
    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2), path)
    status, err, text = run(["inspect", str(path)])
    assert (status, err) == (0, []) and "Linear" in text
    assert text.count("unsafe-global") == 1  # in the report, once
    status, err, _ = run(["inspect", str(path), "--json"])
    assert (status, err) == (0, [])


@pytest.mark.spec("slim.md#slim-report")
def test_slim_dry_run_json_says_not_written(tmp_path: Path) -> None:
    src, out = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save({"v": torch.randn(50_000)[:3]}, src)
    status, _, text = run(["slim", str(src), str(out), "--dry-run", "--json"])
    report = json.loads(text)
    assert status == 0 and report["written"] is False and report["would_write"] is True
    assert not out.exists()
    _, _, line = run(["slim", str(src), str(out), "--dry-run"])
    assert "would write" in line


@pytest.mark.spec("slim.md#slim-cli")
def test_slim_into_a_directory_is_a_clear_refusal(tmp_path: Path) -> None:
    src = tmp_path / "in.pt"
    torch.save({"v": torch.randn(50_000)[:3]}, src)
    for extra in ([], ["--force"], ["--dry-run"]):
        status, err, _ = run(["slim", str(src), str(tmp_path), *extra])
        assert status == 2 and err == [f"unsupported: output-not-regular ('{tmp_path}' is a directory: slim "
                                       "writes only a regular file, never over another kind (--force "
                                       "neither))"], extra
    assert left_behind(tmp_path) == []


@pytest.mark.spec("inspect.md#inspect-plot")
def test_a_chart_without_its_extra_fails_before_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",  # both hidden: the same on a machine without the extra
                        lambda name, *a: None if name in ("squarify", "matplotlib") else real(name, *a))
    path = tmp_path / "in.pt"
    torch.save({"v": torch.zeros(3)}, path)
    status, err, out = run(["inspect", str(path), "--treemap", str(tmp_path / "t.svg")])
    assert (status, out) == (2, "")
    assert err == ["unsupported: treemap (needs matplotlib and squarify, not installed: "
                   "pip install 'torchfmt[plot]')"]


@pytest.mark.spec("inspect.md#inspect-cli")
def test_inspect_reads_a_file_over_the_limits_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal an inert reading cannot lift costs inspect one reading, as it costs dump (it read the
    file a second time, inert: 25.6 s against dump's 11.5 s on 100,000 views); a whole model two."""
    import torchfmt.tools.inspect as insp

    calls: list[bool] = []
    real = insp.read

    def counting(path: str, hints: object = None, *, inert: bool = False) -> object:
        calls.append(inert)
        return real(path, hints, inert=inert)  # type: ignore[arg-type]

    monkeypatch.setattr(insp, "read", counting)
    base = torch.zeros(1 << 18)
    over = tmp_path / "views.pt"
    torch.save([base[:] for _ in range(300)], over)  # past VIEW_FACTOR x 1 MB + VIEW_BYTES
    report, status = insp.inspect(str(over), strict_status=True)
    assert status == 1 and report["error"]["code"] == "limit-exceeded" and calls == [False]
    calls.clear()
    model = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2), model)
    insp.inspect(str(model))
    assert calls == [False, True]


def test_an_unread_files_line_is_printed_once(tmp_path: Path) -> None:
    base = torch.zeros(1 << 18)
    over = tmp_path / "views.pt"
    torch.save([base[:] for _ in range(300)], over)  # past VIEW_FACTOR x 1 MB + VIEW_BYTES
    status, err, text = run(["inspect", str(over)])
    assert status == 1 and len(err) == 1 and err[0].startswith("limit-exceeded: ")
    assert "limit-exceeded" not in text


@pytest.mark.spec("t7.md#t7-convert-refusals")
def test_safetensors_refusal_advice_works_when_followed(tmp_path: Path) -> None:
    """`--metadata`'s refusal recommended `--metadata`; "1 values are"."""
    pytest.importorskip("safetensors")
    plain, odd = tmp_path / "plain.pt", tmp_path / "odd.pt"
    torch.save({"w": torch.zeros(2), "epoch": 3}, plain)
    torch.save({"w": torch.zeros(2), "s": torch.zeros(3).to_sparse()}, odd)
    out = tmp_path / "o.safetensors"
    status, err, _ = run(["convert", str(plain), str(out)])
    assert status == 2 and "1 value is not: " in err[0] and err[0].endswith("--metadata keeps them, as JSON "
                                                                              "in __metadata__)")
    assert run(["convert", str(plain), str(out), "--metadata"])[0] == 0  # the advice, followed, works
    out.unlink()
    for extra in ([], ["--metadata"]):
        status, err, _ = run(["convert", str(odd), str(out), *extra])
        assert status == 2 and "1 value is not: " in err[0] and "--to pt-zip keeps every value" in err[0]
        assert not err[0].endswith("--metadata keeps them, as JSON in __metadata__)")
    assert run(["convert", str(odd), str(tmp_path / "o.pt"), "--to", "pt-zip"])[0] == 0


@pytest.mark.spec("t7.md#t7-convert-devices")
def test_devices_count_tensors(tmp_path: Path) -> None:
    """"37 from cuda:0" of 22 tensors: a tensor and its storage were counted apart."""
    import numpy as np
    import torchfmt
    from torchfmt.dtypes import BY_NAME
    from torchfmt.model import Storage, Tensor
    from torchfmt.tools.convert import convert

    s = Storage(BY_NAME["float32"], 6, "cuda:0", data=np.arange(6, dtype=np.float32))
    src = tmp_path / "gpu.pt"
    views = {f"v{i}": Tensor(BY_NAME["float32"], (2,), (1,), 2 * i, s, "cuda:0") for i in range(3)}
    torchfmt.save(views, src)
    report = convert(str(src), str(tmp_path / "cpu.pt"))
    assert report.moved_to_cpu == {"cuda:0": 3} and "(3 from cuda:0;" in report.line()


def test_sizes_say_decimal(tmp_path: Path) -> None:
    from torchfmt.tools.sizes import human_bytes

    assert [human_bytes(n) for n in (999, 1000, 1024)] == ["999 B", "1.0 kB", "1.0 kB"]
    path = tmp_path / "in.pt"
    torch.save({"v": torch.zeros(300)}, path)
    _, _, text = run(["inspect", str(path)])
    assert "(decimal units: 1 kB = 1,000 bytes)" in text and " KB" not in text
