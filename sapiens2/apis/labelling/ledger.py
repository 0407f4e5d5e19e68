"""The per-rank record of finished items: what makes a labelling job resumable.

Each rank appends one JSON line per finished item to its own ``rank<N>.jsonl`` (``{"item", "status": "done" or
"failed", "path"(, "reason")}``), flushed and fsync'd before the next item counts, and only after the item's output
files are complete (they are written atomically, so a kill never leaves a half-written file behind a ``done`` line).
A kill may tear the last line: readers ignore a last line without its newline, and the rank that owns the file cuts
it off before appending. An item without a ``done`` line (never started, interrupted, or failed) is done again by
the next run.
"""
import glob
import json
import os
import os.path as osp
import threading
from typing import Dict, Optional

from sapiens2.utils import strict_json
from sapiens2.utils.atomic_save import refuse_links

#: The ledger files of an output folder, one per rank: ``<out>/.sapiens2_job/ledger/rank<N>.jsonl``.
LEDGER_GLOB = 'rank*.jsonl'
DONE, FAILED = 'done', 'failed'


def ledger_folder(job_dir: str) -> str:
    return osp.join(job_dir, 'ledger')


class Ledger:
    """The append-only ledger of rank ``rank`` in ``job_dir`` (thread-safe: the writer thread records done items,
    the reading thread failed ones)."""

    def __init__(self, job_dir: str, rank: int) -> None:
        self.path = osp.join(ledger_folder(job_dir), f'rank{rank}.jsonl')
        os.makedirs(osp.dirname(self.path), exist_ok=True)
        refuse_links(self.path, job_dir, '--out')
        _cut_torn_line(self.path)
        # direct write: an append-only log, each line fsync'd (atomic replacement would rewrite the whole file)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, 'O_NOFOLLOW', 0), 0o666)
        self._lock = threading.Lock()

    def record(self, item: str, status: str, path: Optional[str] = None, reason: Optional[str] = None) -> None:
        """Append the line of ``item`` and make it durable before returning."""
        entry = dict(item=item, status=status, path=path)
        if reason is not None:
            entry['reason'] = reason
        line = (strict_json.dumps(entry) + '\n').encode()
        with self._lock:
            os.write(self._fd, line)
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def _cut_torn_line(path: str, chunk: int = 1 << 16) -> None:
    """Truncate ``path`` after its last newline (a kill tore the line after it), reading only its tail (a ledger
    of a million items is 100 MB)."""
    try:
        f = open(path, 'rb')
    except FileNotFoundError:
        return
    with f:
        end = position = f.seek(0, os.SEEK_END)
        f.seek(max(0, end - 1))
        if end == 0 or f.read(1) == b'\n':
            return
        while position > 0:
            start = max(0, position - chunk)
            f.seek(start)
            newline = f.read(position - start).rfind(b'\n')
            if newline >= 0:
                break
            position = start
    os.truncate(path, start + newline + 1 if position > 0 else 0)


def read_ledgers(job_dir: str) -> Dict[str, dict]:
    """The last line of every item in the ledgers of ``job_dir`` (all ranks, all runs), by item (a ``done`` line
    wins over any ``failed`` one: its outputs are complete); a torn last line is ignored, a damaged complete line is
    one ``ValueError`` naming the file."""
    entries: Dict[str, dict] = {}
    for path in sorted(glob.glob(osp.join(glob.escape(ledger_folder(job_dir)), LEDGER_GLOB))):
        with open(path, 'rb') as f:
            data = f.read()
        lines = data.split(b'\n')
        for number, line in enumerate(lines[:-1], 1):  # the part after the last newline is torn (or empty)
            try:
                entry = json.loads(line)
                if entries.get(entry['item'], {}).get('status') != DONE:  # done once: done (outputs complete)
                    entries[entry['item']] = entry
            except (ValueError, KeyError, TypeError) as err:
                raise ValueError(f'{path}, line {number}, is not a ledger line ({err}); the ledger is damaged: run '
                                 'again with --overwrite to label everything anew') from err
    return entries
