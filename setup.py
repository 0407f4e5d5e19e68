"""Installs the sapiens2 package.

mmpose, mmsegmentation, mmdet and the compiled mmcv are not listed in ``install_requires``: their metadata pulls
chumpy, which cannot build. ``make`` (tools/misc/setup_env.sh) installs them with ``--no-deps``.
"""
import os.path as osp

from setuptools import find_packages, setup


def read_requirements(name: str) -> list:
    path = osp.join(osp.dirname(__file__), 'requirements', name)
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith('#')]


def read_version() -> str:
    scope: dict = {}
    with open(osp.join(osp.dirname(__file__), 'sapiens2', 'version.py')) as f:
        exec(f.read(), scope)
    return scope['__version__']


setup(
    name='sapiens2',
    version=read_version(),
    description='Sapiens2 human-centric vision transformers on MMEngine, mmpose and mmsegmentation',
    packages=find_packages(include=['sapiens2', 'sapiens2.*']),
    include_package_data=True,
    package_data={'sapiens2.metainfo': ['*.json']},
    python_requires='>=3.10',
    install_requires=read_requirements('runtime.txt'),
    extras_require={'tests': read_requirements('tests.txt'), 'optional': read_requirements('optional.txt')},
    entry_points={'console_scripts': ['sapiens2-infer=sapiens2.apis.cli:main']},
)
