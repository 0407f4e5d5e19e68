"""Installs sapiens2 and its project packages (sapiens2_normal, sapiens2_pointmap, sapiens2_albedo, ...).

The configs ship inside the package as ``sapiens2/.mim/configs`` (links to ``configs/*`` and ``projects/*/configs``
in a checkout, real files in a wheel), which is where MMEngine resolves a ``sapiens2::pose/...`` config base.
mmpose, mmsegmentation, mmdet and the compiled mmcv are not in ``install_requires``: their metadata pulls chumpy,
which cannot build; ``make install`` (tools/misc/setup_env.sh) installs them with ``--no-deps`` (docs/install.md).
"""
import glob
import os.path as osp

from setuptools import find_packages, setup

ROOT = osp.dirname(osp.abspath(__file__))


def read_requirements(name: str) -> list:
    with open(osp.join(ROOT, 'requirements', name)) as f:
        return [line.split('#')[0].strip() for line in f if line.split('#')[0].strip()]


def read_version() -> str:
    scope: dict = {}
    with open(osp.join(ROOT, 'sapiens2', 'version.py')) as f:
        exec(f.read(), scope)
    return scope['__version__']


def project_packages() -> dict:
    """``{'sapiens2_normal': 'projects/normal/sapiens2_normal', ...}``: every project's importable package."""
    found = {}
    for init in sorted(glob.glob(osp.join(ROOT, 'projects', '*', 'sapiens2_*', '__init__.py'))):
        package_dir = osp.relpath(osp.dirname(init), ROOT)
        found[osp.basename(package_dir)] = package_dir
    return found


PROJECTS = project_packages()
packages = find_packages(include=['sapiens2', 'sapiens2.*'])
for name, path in PROJECTS.items():
    packages += [name] + [f'{name}.{sub}' for sub in find_packages(path)]

setup(
    name='sapiens2',
    version=read_version(),
    description='Sapiens2 human-centric vision transformers on MMEngine, mmpose and mmsegmentation',
    long_description=open(osp.join(ROOT, 'README.md'), encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    license='Apache-2.0',
    packages=packages,
    py_modules=['sapiens2_entry'],
    package_dir=PROJECTS,
    package_data={'sapiens2': ['metainfo/*.json', 'hub/model_zoo.json', '.mim/model-index.yml', '.mim/configs/**/*.py',
                            '.mim/configs/**/model_zoo.json', 'demo_models/*.safetensors', 'demo_models/*.json',
                            'demo_models/*.md']},
    python_requires='>=3.10',
    install_requires=read_requirements('runtime.txt'),
    extras_require={'tests': read_requirements('tests.txt'), 'optional': read_requirements('optional.txt'),
                    'web': read_requirements('web.txt')},
    # Outside the package, so that --help and mistakes are answered without importing torch (sapiens2_entry.py).
    entry_points={'console_scripts': ['sapiens2=sapiens2_entry:main', 'sapiens2-infer=sapiens2_entry:infer_main']},
    zip_safe=False,
)
