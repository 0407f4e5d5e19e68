"""Convert checkpoints: official .safetensors <-> MMEngine .pth, and sapiens2 <-> Hugging Face transformers.

    python tools/convert_checkpoint.py SRC DST [--rename OLD=NEW ...] [--trust-checkpoint]
    python tools/convert_checkpoint.py SRC SRC [SRC ...] DST --average
    python tools/convert_checkpoint.py CKPT --to-transformers OUT_DIR --config CFG [--backbone-only] [--compare]
    python tools/convert_checkpoint.py DST --from-transformers HF_DIR --config CFG [--backbone-only]

Between files the format follows each file's suffix (DST: .safetensors, or .pth/.pt for a torch file; an existing
DST is replaced only with --overwrite). The model weights are kept (tensors and dtypes copied bit-exact) with the
checkpoint's meta (e.g. dataset_meta; a .safetensors file stores it as JSON metadata), not the training state.
SRC (and CKPT) may also be a Hub reference (hf://org/repo[@revision][/<file>]) or a model alias (pose-1b),
downloaded if needed.
Example: `--rename head.=decode_head.` gives a pose model trained with mmpose the official key names.

--average writes the mean of the weights of two or more checkpoints of one model (a "model soup", e.g. fine-tunes
from one start; docs/checkpoints.md) with the first one's meta.

--to-transformers writes config.json + model.safetensors + README.md for transformers' Sapiens2 classes
(`AutoModel...from_pretrained(OUT_DIR)`) and checks that transformers loads every weight. --from-transformers checks
a transformers folder's config.json against CFG and writes its weights as a checkpoint for sapiens2 (load_from,
init_cfg, tools/test.py). transformers computes RoPE in fp32: set model.backbone.pos_embed_rope_dtype='fp32' to
reproduce its outputs (docs/differences.md).
"""
import argparse
import sys

import sapiens2_entry  # noqa: F401  (first: sapiens2 imports without torch until main() registers its modules)

# isort: split
from sapiens2.config.cli_options import ConfigOptionsAction
from sapiens2.engine.checkpoint.policy import TRUST_CHECKPOINT_HELP
from sapiens2.hub.locate import fetch_released
from sapiens2.registration import register_all_modules
from sapiens2.utils.cli_errors import add_debug_argument, run_cli

#: --dtype: the names of the transformers dtypes (sapiens2.interop.transformers.WEIGHT_DTYPES).
DTYPES = {'fp32': 'float32', 'bf16': 'bfloat16', 'fp16': 'float16'}


def parse_rename(text: str):
    if '=' not in text:
        raise argparse.ArgumentTypeError(f'--rename expects OLD=NEW, got {text!r}')
    return tuple(text.split('=', 1))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('paths', nargs='+', metavar='PATH',
                        help='SRC DST; SRC SRC [SRC ...] DST with --average; or CKPT with --to-transformers; or DST '
                        'with --from-transformers')
    parser.add_argument('--average', action='store_true', help='write the mean of the SRC checkpoints to DST')
    parser.add_argument('--rename', type=parse_rename, action='append', default=[], help='OLD=NEW key prefix')
    parser.add_argument('--to-transformers', metavar='OUT_DIR', help='export CKPT with --config to a transformers '
                        'folder')
    parser.add_argument('--from-transformers', metavar='HF_DIR', help='import a local transformers folder')
    parser.add_argument('--config', help='the sapiens2 config of the model (file or sapiens2::<task>/<name>.py)')
    parser.add_argument('--backbone-only', action='store_true',
                        help='convert only the backbone (Sapiens2Model); for pretrain checkpoints')
    parser.add_argument('--no-verify', action='store_true',
                        help='skip loading the exported folder with transformers')
    parser.add_argument('--dtype', choices=sorted(DTYPES), default=None,
                        help='--to-transformers: the dtype of the written weights (default: the checkpoint\'s)')
    parser.add_argument('--compare', action='store_true',
                        help='after exporting, run both models in float32 on a random image and print the max '
                        'differences (our RoPE tables in the config\'s RoPE dtype)')
    parser.add_argument('--overwrite', action='store_true', help='replace an existing DST (or output files)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    add_debug_argument(parser)
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction, default=None,
                        help='override settings of --config, e.g. model.backbone.pos_embed_rope_dtype=fp32')
    args = parser.parse_args(argv)
    transformers_mode = args.to_transformers or args.from_transformers
    if args.to_transformers and args.from_transformers:
        parser.error('give either --to-transformers or --from-transformers')
    if transformers_mode and args.average:
        parser.error('--average writes a checkpoint file; convert the result in a second command')
    if transformers_mode:
        if len(args.paths) != 1:
            parser.error('with --to-transformers give one CKPT, with --from-transformers one DST')
        if not args.config:
            parser.error('--to-transformers/--from-transformers need --config (the model\'s sapiens2 config)')
        if args.rename:
            parser.error('--rename applies to file conversions only')
    elif args.average:
        if len(args.paths) < 3:
            parser.error('--average needs two or more SRC checkpoints and a DST')
        if args.rename:
            parser.error('--rename applies to file conversions only')
    elif len(args.paths) != 2:
        parser.error('give SRC and DST (or use --to-transformers / --from-transformers)')
    if args.compare and not args.to_transformers:
        parser.error('--compare goes with --to-transformers')
    if args.dtype and not args.to_transformers:
        parser.error('--dtype goes with --to-transformers')
    return args


def compare(args: argparse.Namespace) -> None:
    from sapiens2.interop.transformers import compare_export
    differences, what = compare_export(args.config, args.paths[0], args.to_transformers, args.backbone_only,
                                       args.cfg_options, args.trust_checkpoint or None)
    for name, value in differences.items():
        print(f'max |ours - transformers| {name}: {value:.3g} ({what})')


def main(argv=None) -> int:
    args = parse_args(argv)
    sources = args.paths[:-1] if args.average else [] if args.from_transformers else args.paths[:1]  # not DST
    for src in sources:
        fetch_released(src)  # SRC or CKPT: an unreachable released checkpoint fails before torch is imported
    register_all_modules()
    if args.to_transformers:
        from sapiens2.interop.transformers import export_to_transformers, read_transformers_config
        export_to_transformers(args.config, args.paths[0], args.to_transformers, backbone_only=args.backbone_only,
                               verify=not args.no_verify, overwrite=args.overwrite, cfg_options=args.cfg_options,
                               trust_checkpoint=args.trust_checkpoint or None, dtype=DTYPES.get(args.dtype))
        stored = str(read_transformers_config(args.to_transformers).dtype).replace('torch.', '')
        print(f'Wrote a transformers Sapiens2 folder to {args.to_transformers} ({stored} weights, '
              f'{"--dtype " + args.dtype if args.dtype else "as in the checkpoint; --dtype fp32 writes float32"})')
        if args.compare:
            compare(args)
    elif args.from_transformers:
        from sapiens2.interop.transformers import import_from_transformers
        dst = import_from_transformers(args.from_transformers, args.config, args.paths[0],
                                       backbone_only=args.backbone_only, overwrite=args.overwrite,
                                       cfg_options=args.cfg_options)
        print(f'Wrote {dst}; to reproduce transformers\' outputs set '
              "model.backbone.pos_embed_rope_dtype='fp32' (sapiens2's default bf16 is the official behaviour)")
    elif args.average:
        from sapiens2.engine.checkpoint import average_checkpoints, check_destination, save_checkpoint
        *sources, dst = args.paths
        check_destination(dst, args.overwrite)
        averaged = average_checkpoints(sources, trust_checkpoint=args.trust_checkpoint or None)
        save_checkpoint(averaged['state_dict'], averaged['meta'], dst)
        print(f'Wrote the mean of {len(sources)} checkpoints ({len(averaged["state_dict"])} tensors) to {dst}')
    else:
        from sapiens2.engine.checkpoint import convert_checkpoint
        state_dict = convert_checkpoint(args.paths[0], args.paths[1], args.rename,
                                        trust_checkpoint=args.trust_checkpoint or None, overwrite=args.overwrite)
        print(f'Wrote {len(state_dict)} tensors to {args.paths[1]}')
    return 0


if __name__ == '__main__':
    sys.exit(run_cli(main))
