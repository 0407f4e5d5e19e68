"""Value types of command-line arguments (a bad value is an ``argparse`` error naming the argument and the range).
``--cfg-options`` and the options the Runner tools share: :mod:`sapiens2.config.cli_options`."""
import argparse
import math


def threshold(text: str) -> float:
    """A score or IoU threshold: a finite number in [0, 1] (``nan`` would compare false with every score)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number; give a threshold in [0, 1]') from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise argparse.ArgumentTypeError(f'{text} is not a threshold; give a finite number in [0, 1]')
    return value


def non_negative(text: str) -> float:
    """A finite number >= 0 (``nan`` and ``inf`` would reach the arithmetic that uses it)."""
    return _finite(text, '>= 0', lambda value: value >= 0)


def positive(text: str) -> float:
    """A finite number > 0."""
    return _finite(text, '> 0', lambda value: value > 0)


def smoothing_lag(text: str) -> float:
    """Seconds of later frames the video smoothing waits for: a finite number in [0, 60], checked before any model
    is built."""
    return _finite(text, 'of seconds between 0 and 60', lambda value: 0 <= value <= 60)


def _finite(text: str, bound: str, ok) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number; give a finite number {bound}') from None
    if not (math.isfinite(value) and ok(value)):
        raise argparse.ArgumentTypeError(f'{text} is out of range; give a finite number {bound}')
    return value
