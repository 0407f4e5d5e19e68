"""``--cfg-options`` (:class:`ConfigOptionsAction`) and the options of the tools that build a Runner
(:func:`add_runner_arguments`)."""
import argparse


class ConfigOptionsAction(argparse.Action):
    """``--cfg-options key=value ...`` parsed by MMEngine's ``DictAction`` (imported only when the option is given, so
    that a tool's ``--help`` and argument errors import no MMEngine), and values written as in a config, with
    ``dict(...)`` or ``{...}`` (``test_evaluator=[dict(type='CocoMetric', ann_file='x')]``), read as that data
    (:func:`sapiens2.config.literals.literal_value`, never run): DictAction splits them at their commas and recurses
    without end on ``dict(a=1, b=2)``, in mmpose's and mmseg's tools too."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from mmengine.config import DictAction

        from sapiens2.config.literals import ConfigNotDataError, literal_value
        written, plain = {}, []
        for item in values:
            key, _, value = item.partition('=')
            if 'dict(' not in value and '{' not in value:
                plain.append(item)
                continue
            try:
                written[key] = literal_value(value)
            except ConfigNotDataError as err:
                parser.error(f'{option_string} {key}={value}: {err}; write the value as a config does, e.g. '
                             f"{key}=\"[dict(type='CocoMetric', ann_file='val.json')]\"")
        DictAction(self.option_strings, self.dest)(parser, namespace, plain, option_string)
        getattr(namespace, self.dest).update(written)


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of the tools that build a Runner: ``--cfg-options``, ``--launcher``, ``--local_rank``."""
    parser.add_argument('--cfg-options', nargs='+', action=ConfigOptionsAction, help='override config keys, key=value')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0)
