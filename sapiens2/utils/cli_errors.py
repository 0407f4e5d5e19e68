"""How the command-line tools report a user's mistake: one ``<prog>: error: ...`` line on stderr, exit code 1.

A missing file, an unknown alias, a bad config or a checkpoint that does not fit the model raises one of
:func:`user_errors` with a message that says what is wrong and how to fix it; the traceback adds nothing for the
user, so :func:`run_cli` prints the message alone. ``--debug`` (or ``SAPIENS2_DEBUG=1``) lets the exception
through with its traceback. Other exceptions (bugs, out of memory...) always keep their traceback.
"""
import argparse
import os
import os.path as osp
import sys
from typing import Callable, Optional, Sequence, Tuple, Type

from .warning_lines import warnings_as_lines

#: Built-in exceptions whose message is the whole story for the user (files, values, names, config syntax).
USER_ERRORS: Tuple[Type[BaseException], ...] = (OSError, ValueError, KeyError, ImportError, SyntaxError)
#: sapiens2's own (checkpoints that do not fit or would run code, a diverging training run,
#: export parity), by module: they count once their module is imported,
#: as it must be before one is raised, so that a command's fast paths (``--help``, mistakes) import no torch.
LIBRARY_USER_ERRORS = (('sapiens2.engine.checkpoint', 'CheckpointMismatchError'),
                       ('sapiens2.engine.checkpoint', 'UnsafeCheckpointError'),
                       ('sapiens2.engine.hooks.non_finite_loss_hook', 'NonFiniteTrainingError'),
                       ('sapiens2.deploy.export', 'ExportParityError'))


def user_errors() -> Tuple[Type[BaseException], ...]:
    """:data:`USER_ERRORS` and those of :data:`LIBRARY_USER_ERRORS` whose module is imported."""
    loaded = tuple(getattr(sys.modules[module], name) for module, name in LIBRARY_USER_ERRORS if module in sys.modules)
    return USER_ERRORS + loaded


def add_debug_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--debug`` (show the traceback of an error) to a tool's parser."""
    parser.add_argument('--debug', action='store_true', help='show the full traceback of an error')


def error_message(err: BaseException) -> str:
    """The message of an exception (without the quotes ``str(KeyError)`` adds), after its type's name unless that is
    a Python built-in (``CheckpointMismatchError: ...``, but not ``FileNotFoundError: ...``)."""
    if isinstance(err, KeyError) and len(err.args) == 1 and isinstance(err.args[0], str):
        message = err.args[0]
    else:
        message = str(err)
    if type(err).__module__ == 'builtins':
        return message or type(err).__name__
    return f'{type(err).__name__}: {message}'


def run_cli(main: Callable[..., Optional[int]], argv: Optional[Sequence[str]] = None,
            prog: Optional[str] = None) -> int:
    """Run ``main(argv)`` (``main()`` when ``argv`` is None) and return its exit code (None counts as 0).

    A :func:`user_errors` exception becomes one ``<prog>: error: <message>`` line on stderr and exit code 1,
    unless ``--debug`` is among the arguments or ``SAPIENS2_DEBUG`` is set; Ctrl-C exits with 130 (printing the
    interrupt's message, when it has one: what was done and kept). sapiens2's warnings print as one line each
    (:func:`~sapiens2.utils.warning_lines.warnings_as_lines`).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    prog = prog or osp.basename(sys.argv[0]) or 'sapiens2'
    debug = '--debug' in args or os.environ.get('SAPIENS2_DEBUG', '') not in ('', '0')
    try:
        with warnings_as_lines(prog):
            code = main() if argv is None else main(argv)
    except Exception as err:
        if debug or not isinstance(err, user_errors()):
            raise
        print(f'{prog}: error: {error_message(err)} (--debug shows the traceback)', file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:
        if debug:
            raise
        print(f'{prog}: {str(err) or "interrupted"}', file=sys.stderr)
        return 130
    return 0 if code is None else int(code)
