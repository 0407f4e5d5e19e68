"""Run Sapiens2 models on images, folders or videos (same as the ``sapiens2-infer`` command).

Usage: python tools/infer.py INPUTS... --out DIR (--task pose seg ... [--size 1b] | --model CONFIG [--weights CKPT])
"""
import sys

from sapiens2_entry import infer_main

if __name__ == '__main__':
    sys.exit(infer_main())
