"""Export the student or teacher backbone of a pretraining checkpoint as bare-key safetensors.

Usage: python projects/pretrain/tools/export_backbone.py CHECKPOINT OUT.safetensors [--source student|teacher]
The output loads into any task config through ``backbone.init_cfg=dict(type='Pretrained', checkpoint=OUT)``.
"""
import argparse

from sapiens2.engine.checkpoint.policy import TRUST_CHECKPOINT_HELP
from sapiens2_pretrain.export import BACKBONE_PREFIXES, export_backbone


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('checkpoint', help='pretraining checkpoint (MMEngine .pth or .safetensors)')
    parser.add_argument('out_file', help='output file, e.g. sapiens2_0.4b_pretrain.safetensors')
    parser.add_argument('--source', choices=sorted(BACKBONE_PREFIXES), default='student',
                        help='which backbone to export (default: student)')
    parser.add_argument('--trust-checkpoint', action='store_true', help=TRUST_CHECKPOINT_HELP)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    state = export_backbone(args.checkpoint, args.out_file, args.source, args.trust_checkpoint or None)
    print(f'wrote {len(state)} tensors ({args.source} backbone) to {args.out_file}')


if __name__ == '__main__':
    main()
