"""EXP-14: ``helix-store import`` and ``export`` run in constant memory: a file four times
bigger takes no more memory (docs/export.md; ``make transfer-1gb`` measures 1 GB)."""

from __future__ import annotations

from pathlib import Path

from .transfer_memory import measure

SMALL, BIG = 6, 24  # megabytes
GROWTH = 6  # megabytes of peak memory a file 18 MB bigger may add (the noise of a process)


def test_EXP_14_a_file_four_times_bigger_takes_no_more_memory(tmp_path: Path) -> None:
    small = measure(SMALL, tmp_path)
    big = measure(BIG, tmp_path)
    print(small, big)
    assert big.sessions >= 3 * small.sessions  # and both came back line for line
    # Holding the file (or the store) would add several times its 18 MB.
    assert big.import_peak_mb - small.import_peak_mb < GROWTH, (small, big)
    assert big.export_peak_mb - small.export_peak_mb < GROWTH, (small, big)
