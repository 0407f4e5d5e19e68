"""A wheel of the repository works from outside it: packaged configs, project packages, console scripts."""
import os
import os.path as osp
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import pytest

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
TOP_LEVEL_OUTPUTS = {'.git', '.venv', 'data', 'work_dirs', 'outputs', 'build', 'dist', '.pytest_cache', '.whl', '.gl'}


def not_sources(folder: str, names: list) -> set:
    """What a build must not see: the checkout's environment and outputs, and caches anywhere."""
    top = TOP_LEVEL_OUTPUTS if osp.samefile(folder, REPO) else set()
    return {n for n in names if n in top or n == '__pycache__' or n.endswith('.egg-info')}

USER_SCRIPT = textwrap.dedent('''
    import os.path as osp, sys
    import sapiens2, sapiens2_albedo, sapiens2_matting, sapiens2_normal, sapiens2_pointmap, sapiens2_pretrain
    from mmengine.registry import MODELS, init_default_scope
    from sapiens2.engine.launch import load_config
    site = sys.argv[1]
    for module in (sapiens2, sapiens2_albedo, sapiens2_matting, sapiens2_normal, sapiens2_pointmap, sapiens2_pretrain):
        assert module.__file__.startswith(site), (module.__name__, module.__file__)
    for name, kind in (('pose/sapiens2_nano_pose_synthhumans-128x96.py', 'TopdownPoseEstimator'),
                       ('seg/sapiens2_nano_seg_synthhumans-128x96.py', 'EncoderDecoder'),
                       ('normal/sapiens2_nano_normal_synthhumans-128x96.py', 'DenseEstimator'),
                       ('matting/sapiens2_nano_matting_synthhumans-128x96.py', 'DenseEstimator')):
        user_config = osp.join(osp.abspath('.'), 'my_' + osp.basename(name))
        with open(user_config, 'w') as f:
            f.write(f"_base_ = ['sapiens2::{name}']\\n")
        cfg = load_config(user_config)
        init_default_scope(cfg.default_scope)
        model = MODELS.build(cfg.model)
        assert type(model).__name__ == kind, type(model)
    print('user configs ok')
''')


@pytest.mark.slow
def test_wheel_installs_and_works_outside_the_repository(tmp_path):
    source = tmp_path / 'source'
    shutil.copytree(REPO, source, ignore=not_sources, symlinks=True)
    wheels = tmp_path / 'wheels'
    build = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '-q', '--no-deps', '--no-build-isolation', '-w',
                            str(wheels), str(source)], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    wheel = next(wheels.glob('sapiens2-*.whl'))

    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(venv)], check=True, timeout=120)
    python = venv / 'bin' / 'python'
    site = subprocess.run([str(python), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                          capture_output=True, text=True, check=True).stdout.strip()
    # The only link to the dependencies: a path line to this environment's site-packages (its .pth files, such as
    # the editable finder of the checkout, are not run from there).
    with open(osp.join(site, 'dependencies.pth'), 'w') as f:
        f.write(sysconfig.get_paths()['purelib'] + '\n')
    install = subprocess.run([sys.executable, '-m', 'pip', '--python', str(python), 'install', '-q', '--no-deps',
                              '--no-index', '--ignore-installed', str(wheel)], capture_output=True, text=True,
                             timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]

    outside = tmp_path / 'elsewhere'
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'PYTHONHOME')}
    run = subprocess.run([str(python), '-c', USER_SCRIPT, site], cwd=outside, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert 'user configs ok' in run.stdout
    for script, expected in (('sapiens2-infer', 'usage: sapiens2-infer'), ('sapiens2', 'sapiens2 0.')):
        args = ['--help'] if script == 'sapiens2-infer' else ['--version']
        proc = subprocess.run([str(venv / 'bin' / script), *args], cwd=outside, env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0 and expected in proc.stdout, proc.stdout + proc.stderr
    listed = subprocess.run([str(venv / 'bin' / 'sapiens2'), 'configs'], cwd=outside, env=env, capture_output=True,
                            text=True, timeout=300).stdout.split()
    assert 'sapiens2::pose/sapiens2_1b_pose_goliath-1024x768.py' in listed
    assert 'sapiens2::normal/sapiens2_1b_normal_render_people-1024x768.py' in listed
    assert 'sapiens2::matting/sapiens2_1b_matting_humans-1024x768.py' in listed
    models = subprocess.run([str(venv / 'bin' / 'sapiens2'), 'models'], cwd=outside, env=env, capture_output=True,
                            text=True, timeout=300).stdout
    assert 'pose-1b\thf://facebook/sapiens2-pose-1b\tsapiens2::pose/sapiens2_1b_pose_goliath-1024x768.py' in models
    assert ('matting-1b\thf://facebook/sapiens2-matting-1b\t'
            'sapiens2::matting/sapiens2_1b_matting_humans-1024x768.py') in models
    # The demo models ship in the wheel and their aliases resolve to the installed files.
    tiny = next(line for line in models.splitlines() if line.startswith('pose-tiny\t')).split('\t')[1]
    assert tiny.startswith(site) and osp.isfile(tiny) and osp.isfile(tiny[:-len('.safetensors')] + '.json'), tiny
