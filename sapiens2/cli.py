"""``sapiens2``: the package's command line (version, packaged configs, model aliases, adaptations, inference, the web
demo). The console script enters through :mod:`sapiens2_entry`, so only the commands that run a model import torch."""
import argparse
import sys
from typing import List, Optional

from sapiens2.utils.cli_errors import add_debug_argument, run_cli
from sapiens2.utils.cli_types import positive
from sapiens2.utils.devices import AUTO, DTYPES


def main(argv: Optional[List[str]] = None) -> int:
    """The command; a user mistake is one error line, exit code 1 (``--debug`` shows the traceback)."""
    return run_cli(_main, argv, prog='sapiens2')


def _main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog='sapiens2', description='Sapiens2 on MMEngine, mmpose and mmsegmentation.')
    parser.add_argument('--version', action='store_true', help='print the version and exit')
    add_debug_argument(parser)
    commands = parser.add_subparsers(dest='command')
    commands.add_parser('configs', help='list the packaged configs, by the name a _base_ uses (sapiens2::...)')
    commands.add_parser('adaptations', help='list the changes sapiens2 makes to MMEngine and the OpenMMLab libraries')
    commands.add_parser('models', help='list the model aliases: Hub repository, config and candidate files')
    commands.add_parser('infer', help='run models on images or videos (same as sapiens2-infer)', add_help=False)
    web = commands.add_parser('web', help='a web page to run the models on an uploaded photo or video (needs the '
                              'extra sapiens2[web]: docs/install.md)')
    web.add_argument('--host', default='127.0.0.1', help='address to serve on (default 127.0.0.1: this machine only)')
    web.add_argument('--port', type=int, default=7860, help='port to serve on (default 7860)')
    web.add_argument('--device', default=None, help='cpu, cuda or cuda:N (default: cuda when available)')
    web.add_argument('--dtype', default=AUTO, choices=DTYPES + (AUTO, ),
                     help='the models\' precision (default auto: as sapiens2-infer, docs/inference.md; fp32: the '
                     'official numerics)')
    web.add_argument('--max-upload-mb', type=positive, default=None,
                     help='the largest upload accepted, in MiB (default 100)')
    args, rest = parser.parse_known_args(argv)
    if args.version:
        from sapiens2.version import __version__
        print(f'sapiens2 {__version__}')
        return 0
    if args.command == 'infer':
        from sapiens2.apis.cli import _main as infer_main
        return infer_main(rest + ['--debug'] if args.debug else rest)
    if rest:
        parser.error(f'unrecognized arguments: {" ".join(rest)}')
    if args.command == 'configs':
        from sapiens2.config.packaged import PREFIX, list_configs
        print('\n'.join(PREFIX + name for name in list_configs()))
        return 0
    if args.command == 'models':
        from sapiens2.hub.model_zoo import model_zoo
        for alias, entry in sorted(model_zoo().items()):
            print(f'{alias}\t{entry.uri()}\t{entry.config or "(checkpoint only)"}\t{", ".join(entry.files)}')
        return 0
    if args.command == 'web':
        from sapiens2.apis.web_demo import MAX_UPLOAD_MB, serve
        serve(args.host, args.port, args.device, args.max_upload_mb or MAX_UPLOAD_MB, args.dtype)
        return 0
    if args.command == 'adaptations':
        import sapiens2.adaptations as adaptations
        adaptations.apply_adaptations()
        print(adaptations.describe())
        return 0
    parser.print_help()
    return 0


if __name__ == '__main__':
    sys.exit(main())
