"""Print a config after ``_base_`` inheritance and ``--cfg-options``.

Usage: python tools/misc/print_config.py CONFIG [--cfg-options k=v ...]
"""
import argparse
import sys

from sapiens2.config.cli_options import ConfigOptionsAction
from sapiens2.engine.launch import load_config
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description='Print the full config')
    parser.add_argument('config')
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction, help='override config keys, key=value')
    add_debug_argument(parser)
    args = parser.parse_args(argv)
    print(load_config(args.config, args.cfg_options).pretty_text)
    return 0


if __name__ == '__main__':
    sys.exit(run_cli(main))
