"""Pictures of one memory instruction: the bank map of a shared access, the sectors of a global one.

Both are ordinary ``Figure``s, so every back end draws them (text, svg, png, latex, html).

bank_figure: one panel per phase (the lanes the hardware serves together). Columns are the 32
banks, rows the wavefronts: cell (w, b) is the w-th different 4-byte word bank b must deliver,
labelled with the lanes that read it (``L5``; ``L4,5`` or ``L0..31`` when lanes share the word;
``L5+3``: lane 5 and three others) and its byte address (``@256``). Row 0 is served in the first wavefront; every cell below it is a bank
conflict, drawn in the conflict colour.

sector_figure: one row per 128-byte cache line touched, 32 columns of 4 bytes; thick borders
separate the four 32-byte sectors. A cell is labelled with the lanes that use its bytes; cells
of fetched sectors that no lane uses are grey (the waste of coalescing), lines' untouched
sectors are white.  Row headers are plain indices (the text back end has room for two
characters); the notes give the byte address of each row's line.

>>> import numpy as np
>>> from cutelab.analysis import AccessTrace, analyze
>>> f = bank_figure(analyze(AccessTrace(np.arange(32)[None, :] * 256, 4, "shared")))
>>> f.grids[0].shape, str(f.grids[0].labels[1, 0])
((32, 32), 'L1\\n@256')
"""

from __future__ import annotations

import numpy as np

from ..errors import LayoutError
from ..render.figure import Figure, Grid
from .access import BANK_BYTES, LINE_BYTES, NUM_BANKS, SECTOR_BYTES, WARP_SIZE, AccessReport

__all__ = ["bank_figure", "sector_figure", "access_figure"]

#: fills: a word served in the first wavefront, a word that costs an extra wavefront (conflict)
BANK_COLORS = ["#BBDDBB", "#EE8866"]
#: fills: bytes a lane uses, bytes of a fetched sector that no lane uses
SECTOR_COLORS = ["#77AADD", "#DDDDDD"]


def _lanes_label(lanes: list[int]) -> str:
    """'L5'; two lanes 'L4,5'; a run of lanes 'L0..31'; otherwise the first and how many more, 'L5+3'."""
    if len(lanes) == 1:
        return f"L{lanes[0]}"
    if len(lanes) == 2:
        return f"L{lanes[0]},{lanes[1]}"
    if lanes[-1] - lanes[0] == len(lanes) - 1:
        return f"L{lanes[0]}..{lanes[-1]}"
    return f"L{lanes[0]}+{len(lanes) - 1}"


def _check(report: AccessReport, i: int, what: str) -> None:
    if not isinstance(report, AccessReport):
        raise LayoutError(f"{what}: expected an AccessReport (from analyze), got {type(report).__name__}")
    n = report.trace.num_instructions
    if not 0 <= i < n:
        raise LayoutError(f"{what}: instruction {i} out of range [0, {n})")


def bank_figure(report: AccessReport, instruction: int = 0) -> Figure:
    """The bank map of one shared-memory instruction: lanes per bank and wavefront, conflicts marked."""
    _check(report, instruction, "bank_figure")
    tr = report.trace
    if tr.space != "shared":
        raise LayoutError("bank_figure: the trace is a global-memory access; draw it with sector_figure")
    i = instruction
    pl = tr.phase_lanes
    grids = []
    for p in report.phases(i):
        words: dict[int, list[int]] = {}
        for lane in range(p.lanes[0], p.lanes[1] + 1):
            a = int(tr.addresses[i, lane])
            if a < 0:
                continue
            for w in range(a // BANK_BYTES, (a + tr.bytes_per_lane - 1) // BANK_BYTES + 1):
                words.setdefault(w, []).append(lane)
        depth = p.wavefronts
        keys = np.full((depth, NUM_BANKS), -1, np.int64)
        labels = np.full((depth, NUM_BANKS), "", dtype=object)
        per_bank: dict[int, list[int]] = {}
        for w in sorted(words):
            per_bank.setdefault(w % NUM_BANKS, []).append(w)
        for b, ws in per_bank.items():
            for r, w in enumerate(ws):
                keys[r, b] = 0 if r == 0 else 1
                labels[r, b] = f"{_lanes_label(words[w])}\n@{w * BANK_BYTES}"
        unit = "matrix" if tr.op == "ldsm" else "phase"
        title = (f"{unit} {p.phase} (lanes {p.lanes[0]}-{p.lanes[1]}): {depth} wavefront{'s' if depth != 1 else ''}"
                 + (f", {depth - 1} conflict{'s' if depth != 2 else ''}" if depth > 1 else ""))
        grids.append(Grid(title, keys, labels.astype(str), BANK_COLORS,
                          row_headers=[str(r) for r in range(depth)], col_headers=[str(b) for b in range(NUM_BANKS)],
                          legend=[(0, "first wavefront"), (1, "bank conflict (extra wavefront)")]))
    if not grids:  # no active lane: an empty bank row
        grids.append(Grid("no active lane", np.full((1, NUM_BANKS), -1, np.int64), None, BANK_COLORS,
                          row_headers=["0"], col_headers=[str(b) for b in range(NUM_BANKS)]))
    phases = WARP_SIZE // pl
    title = (f"{tr.describe(i)}: {tr.kind()}, banks of {phases} phase{'s' if phases != 1 else ''} "
             f"of {pl} lanes (columns: banks, rows: wavefronts)")
    notes = [report.explain(i), "row 0 of a bank is served in the first wavefront; each row below it is a conflict"]
    return Figure(title, grids, notes=notes, kind="layout")


def sector_figure(report: AccessReport, instruction: int = 0) -> Figure:
    """The cache lines and 32-byte sectors one global instruction touches, by lane."""
    _check(report, instruction, "sector_figure")
    tr = report.trace
    i = instruction
    words: dict[int, list[int]] = {}
    for lane in range(WARP_SIZE):
        a = int(tr.addresses[i, lane])
        if a < 0:
            continue
        for w in range(a // BANK_BYTES, (a + tr.bytes_per_lane - 1) // BANK_BYTES + 1):
            words.setdefault(w, []).append(lane)
    per_line = LINE_BYTES // BANK_BYTES
    per_sector = SECTOR_BYTES // BANK_BYTES
    lines = sorted({w // per_line for w in words})
    rows = max(len(lines), 1)
    keys = np.full((rows, per_line), -1, np.int64)
    labels = np.full((rows, per_line), "", dtype=object)
    fetched = {w // per_sector for w in words}
    for r, ln in enumerate(lines):
        for c in range(per_line):
            w = ln * per_line + c
            if w in words:
                keys[r, c] = 0
                labels[r, c] = _lanes_label(words[w])
            elif w // per_sector in fetched:
                keys[r, c] = 1
                labels[r, c] = "-"
    groups = np.arange(per_line)[None, :] // per_sector + 4 * np.arange(rows)[:, None]
    g = Grid(f"{len(lines)} cache line(s), {int(report.sectors[i])} sector(s)", keys, labels.astype(str),
             SECTOR_COLORS, row_headers=[str(r) for r in range(rows)],
             col_headers=[str(BANK_BYTES * c) for c in range(per_line)], groups=groups,
             legend=[(0, "bytes used by a lane"), (1, "fetched, unused")])
    title = f"{tr.describe(i)}: {tr.kind()}, 32-byte sectors of 128-byte lines (columns: byte in line)"
    where = ", ".join(f"{r}: @{ln * LINE_BYTES}" for r, ln in enumerate(lines[:8])) + (" ..." if len(lines) > 8 else "")
    notes = [report.explain(i), f"rows are cache lines at byte addresses {where}; '-': fetched, unused"]
    return Figure(title, [g], notes=notes, kind="layout")


def access_figure(report: AccessReport, instruction: int = 0) -> Figure:
    """bank_figure for shared memory, sector_figure for global memory."""
    _check(report, instruction, "access_figure")
    if report.trace.space == "shared":
        return bank_figure(report, instruction)
    return sector_figure(report, instruction)
