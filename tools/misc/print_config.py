"""Print a config after ``_base_`` inheritance and ``--cfg-options``.

Usage: python tools/misc/print_config.py CONFIG [--cfg-options k=v ...]
"""
import argparse
import os.path as osp
import sys

sys.path.insert(0, osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))

from sapiens2.apis.builder import load_config  # noqa: E402
from sapiens2.engine.launch import DictAction  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description='Print the full config')
    parser.add_argument('config')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, help='override config keys, key=value')
    args = parser.parse_args(argv)
    print(load_config(args.config, args.cfg_options).pretty_text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
