"""torchfmt.recursion: raising the process-wide recursion limit for a bounded walk, from many threads.

Each scenario runs in a fresh interpreter: in the test process, other threads (the suite's adapter runs)
hold raised limits of their own at any moment, which is the very thing being tested."""

from __future__ import annotations

import subprocess
import sys
import textwrap

INTERLEAVED = """
import sys, threading
from torchfmt.recursion import recursion_limit

before = sys.getrecursionlimit()
a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
seen = {}

def a():
    with recursion_limit(30_000):
        a_in.set()
        b_in.wait(5)
        seen["a inside, b inside"] = sys.getrecursionlimit()
    a_out.set()

def b():
    a_in.wait(5)
    with recursion_limit(50_000):
        b_in.set()
        a_out.wait(5)
        seen["b inside, a left"] = sys.getrecursionlimit()

threads = [threading.Thread(target=a), threading.Thread(target=b)]
for t in threads:
    t.start()
for t in threads:
    t.join(10)
with recursion_limit(10):
    seen["a block asking for less"] = sys.getrecursionlimit()
seen["both left"] = sys.getrecursionlimit()
print(before, sorted(seen.items()))
"""


def test_interleaved_blocks_keep_the_largest_until_the_last_leaves() -> None:
    """Thread A raises to 30,000, B to 50,000, A leaves first: B still has its 50,000 (a save-and-restore
    put A's saved 1,000 back under B), and when B leaves the limit found before both comes back (a
    save-and-restore by B would have left A's 30,000 behind for good); a block never lowers it."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(INTERLEAVED)], capture_output=True,
                         text=True, timeout=60, check=True).stdout.split(" ", 1)
    before = int(out[0])
    assert before < 30_000
    assert out[1].strip() == str(sorted({"a inside, b inside": 50_000, "b inside, a left": 50_000,
                                         "a block asking for less": before, "both left": before}.items()))
