"""Labelling a dataset: ``sapiens2-infer`` sharded over ranks (torchrun, SLURM), resumable, with merged outputs."""
from .job import run_job
from .ledger import Ledger, read_ledgers
from .merge import merge_outputs
from .share import rank_share

__all__ = ['run_job', 'Ledger', 'read_ledgers', 'merge_outputs', 'rank_share']
