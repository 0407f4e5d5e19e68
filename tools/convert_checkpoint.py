"""Convert checkpoints between the official .safetensors layout and MMEngine .pth files (both ways).

    python tools/convert_checkpoint.py SRC DST [--rename OLD=NEW ...] [--trust-checkpoint]

The format follows each file's suffix. The model weights are kept (tensors and dtypes copied bit-exact) with the
checkpoint's meta (e.g. dataset_meta; a .safetensors file stores it as JSON metadata), not the training state.
SRC may also be a Hub reference (hf://org/repo[@revision][/<file>]) or a model alias (pose-1b), downloaded if needed.
Example: `--rename head.=decode_head.` gives a pose model trained with mmpose the official key names.
"""
import argparse
import sys

from sapiens2.engine.checkpoint import TRUST_CHECKPOINT_HELP, convert_checkpoint
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
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    add_debug_argument(parser)
    args = parser.parse_args()
    state_dict = convert_checkpoint(args.src, args.dst, args.rename, trust_checkpoint=args.trust_checkpoint or None)
    print(f'Wrote {len(state_dict)} tensors to {args.dst}')


if __name__ == '__main__':
    sys.exit(run_cli(main))
