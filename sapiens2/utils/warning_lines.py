"""sapiens2's own warnings, as the commands print them: one ``<prog>: warning: <message>`` line on stderr.

Python prints a warning with its file, line number and source line, which says nothing to a user of a command.
:func:`warnings_as_lines` (used by :func:`sapiens2.utils.cli_errors.run_cli`, so by every command) prints the
warnings that sapiens2 raises (a category defined in a sapiens2 package, or raised from its code) as one line, a
``...Notice`` category as ``notice:``; they stay Python warnings, so filters (``-W``, ``PYTHONWARNINGS``,
``warnings.simplefilter``) and tests see them as before. Other libraries' warnings keep Python's format.
"""
import contextlib
import os
import os.path as osp
import sys
import warnings
from typing import Iterator, List


def _package_roots() -> List[str]:
    """Folders of the imported sapiens2 packages (sapiens2, sapiens2_normal, ...), each ending with a separator."""
    return [osp.dirname(module.__file__) + os.sep for name, module in list(sys.modules.items())
            if '.' not in name and name.startswith('sapiens2') and getattr(module, '__path__', None)
            and getattr(module, '__file__', None)]


def is_sapiens2_warning(category: type, filename: str) -> bool:
    """Whether a warning comes from sapiens2: its category is defined in a sapiens2 package, or it is raised from
    sapiens2's code."""
    if category.__module__.split('.')[0].startswith('sapiens2'):
        return True
    return str(filename).startswith(tuple(_package_roots()))


def warning_line(prog: str, message: Warning, category: type) -> str:
    label = 'notice' if category.__name__.endswith('Notice') else 'warning'
    return f'{prog}: {label}: {message}'


@contextlib.contextmanager
def warnings_as_lines(prog: str) -> Iterator[None]:
    """Within the block, sapiens2's warnings print as one line each (see the module docstring)."""
    upstream = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None) -> None:
        if not is_sapiens2_warning(category, filename):
            return upstream(message, category, filename, lineno, file, line)
        stream = sys.stderr if file is None else file
        try:
            stream.write(warning_line(prog, message, category) + '\n')
        except (AttributeError, OSError):  # no stderr (pythonw), as warnings does
            pass

    warnings.showwarning = showwarning
    try:
        yield
    finally:
        warnings.showwarning = upstream
