"""Convert checkpoints between the official .safetensors layout and MMEngine .pth files (both ways).

    python tools/convert_checkpoint.py SRC DST [--rename OLD=NEW ...]

The format follows each file's suffix. Only model weights are kept; tensors and dtypes are copied bit-exact.
SRC may also be a Hub reference (hf://org/repo[@revision][/<file>]) or a model alias (pose-1b), downloaded if needed.
Example: `--rename head.=decode_head.` gives a pose model trained with mmpose the official key names.
"""
import argparse
import sys

from sapiens2.engine.checkpoint import convert_checkpoint
from sapiens2.utils.cli_errors import add_debug_argument, run_cli


def parse_rename(text: str):
    if '=' not in text:
        raise argparse.ArgumentTypeError(f'--rename expects OLD=NEW, got {text!r}')
    return tuple(text.split('=', 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('src', help='input checkpoint (.safetensors, .pth, .bin, hf://... or an alias)')
    parser.add_argument('dst', help='output checkpoint (.safetensors or .pth)')
    parser.add_argument('--rename', type=parse_rename, action='append', default=[], help='OLD=NEW key prefix')
    add_debug_argument(parser)
    args = parser.parse_args()
    state_dict = convert_checkpoint(args.src, args.dst, args.rename)
    print(f'Wrote {len(state_dict)} tensors to {args.dst}')


if __name__ == '__main__':
    sys.exit(run_cli(main))
