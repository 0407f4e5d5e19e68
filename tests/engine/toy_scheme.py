"""A toy checkpoint URI scheme for the tests: ``toy://NAME`` is the file NAME in ``$SAPIENS2_TOY_SCHEME_ROOT``.

Importing this module registers the scheme (configs name it in ``custom_imports`` for the subprocess tests).
"""
import os

from sapiens2.engine.checkpoint import register_checkpoint_scheme

PREFIX = 'toy://'
ROOT_VARIABLE = 'SAPIENS2_TOY_SCHEME_ROOT'


def resolve(uri: str) -> str:
    return os.path.join(os.environ[ROOT_VARIABLE], uri[len(PREFIX):])


register_checkpoint_scheme(PREFIX, resolve, force=True)
