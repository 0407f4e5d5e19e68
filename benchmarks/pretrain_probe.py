"""Does Sapiens2 pretraining give better dense features than random init, and the joint objective than MAE alone?

    OMP_NUM_THREADS=1 python benchmarks/pretrain_probe.py --workers 2            # the full benchmark (docs table)
    python benchmarks/pretrain_probe.py --help                                   # the other modes

The benchmark is the package ``benchmarks/pretrain_probe_lib`` (its docstring says what it measures and how).
"""
from pretrain_probe_lib.cli import run

if __name__ == '__main__':
    run()
