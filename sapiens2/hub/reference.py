"""Hub references: ``hf://org/repo[@revision][/<file in repo>]`` (model repositories of the Hugging Face Hub)."""
import re
from dataclasses import dataclass
from typing import Optional

HF_PREFIX = 'hf://'
_NAME = r'[A-Za-z0-9][A-Za-z0-9._-]*'
# A revision is a branch, tag or commit; only the Hub's special refs (refs/pr/N, refs/convert/NAME) contain a '/'.
_URI = re.compile(rf'^(?P<repo>{_NAME}/{_NAME})(?:@(?P<revision>refs/(?:pr/\d+|convert/[\w.-]+)|[^/@]+))?'
                  r'(?:/(?P<filename>[^@]+))?$')
_OTHER_REPO_TYPES = ('datasets', 'spaces', 'buckets', 'kernels')


@dataclass(frozen=True)
class HubReference:
    """A model repository of the Hub, an optional revision (default: the ``main`` branch) and file name."""

    repo_id: str
    revision: Optional[str] = None
    filename: Optional[str] = None

    def uri(self) -> str:
        """The ``hf://`` form of the reference."""
        revision = f'@{self.revision}' if self.revision else ''
        filename = f'/{self.filename}' if self.filename else ''
        return f'{HF_PREFIX}{self.repo_id}{revision}{filename}'


def is_hub_uri(name: str) -> bool:
    """True for names starting with ``hf://``."""
    return str(name).startswith(HF_PREFIX)


def parse_hub_uri(uri: str) -> HubReference:
    """``'hf://facebook/sapiens2-pose-1b@v1/sapiens2_1b_pose.safetensors'`` -> :class:`HubReference`.

    ``hf://models/org/repo`` (huggingface_hub's explicit form) is accepted; dataset and space repositories are not.
    """
    if not is_hub_uri(uri):
        raise ValueError(f'{uri!r} is not a Hub reference; write hf://org/repo[@revision][/<file>]')
    rest = uri[len(HF_PREFIX):]
    first = rest.split('/', 1)[0]
    if first in _OTHER_REPO_TYPES:
        raise ValueError(f'{uri}: only model repositories hold checkpoints; write hf://org/repo[@revision][/<file>]')
    if first == 'models':
        rest = rest.split('/', 1)[1] if '/' in rest else ''
    match = _URI.match(rest)
    filename = match['filename'] if match else None
    if not match or (filename is not None and '//' in f'/{filename}/'):  # empty path segments
        raise ValueError(f'{uri!r} is not a valid Hub reference; write hf://org/repo[@revision][/<file>], e.g. '
                         'hf://facebook/sapiens2-pose-1b or hf://facebook/sapiens2-pose-1b@main/'
                         'sapiens2_1b_pose.safetensors')
    return HubReference(match['repo'], match['revision'], match['filename'])
