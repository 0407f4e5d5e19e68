"""A bundle's config is read as data: what ``Config.dump`` writes loads as ``Config.fromfile`` would load it, and
code (through the CLI and the inferencer) is refused without running. Manifest paths stay inside the bundle."""
import importlib.util
import json
import os
import re
import shutil
import sys

import cv2
import numpy as np
import pytest
from mmengine.config import Config

from sapiens2.apis import Sapiens2Inferencer
from sapiens2.apis.backends.bundle import BundleError, read_bundle
from sapiens2.apis.backends.config_data import LAYOUT_KEYS, load_bundle_config, read_config_data
from sapiens2.apis.cli import main as infer_main

HAS_ORT = importlib.util.find_spec('onnxruntime') is not None and importlib.util.find_spec('onnxscript') is not None
needs_ort = pytest.mark.skipif(not HAS_ORT, reason='bundles need onnxscript + onnxruntime')
HOW = "a bundle's config is read as data and never run"


def test_a_bundle_config_with_code_is_one_line_saying_it_is_data_and_how_to_fix(tmp_path):
    path = tmp_path / 'config.py'
    path.write_text("model = dict(type='Sapiens2')\n_x = __import__('os').system('true')\n")
    with pytest.raises(BundleError, match=rf"^{path}, line 2: a call to __import__\('os'\)\.system; {HOW} .*export "
                       r'the bundle again with tools/deploy/export\.py$'):
        read_config_data(str(path))
    path.write_bytes(b'\xff\xfe')
    with pytest.raises(BundleError, match=rf"^{path}: .*codec can't decode.*; {HOW}"):
        read_config_data(str(path))


def test_a_type_that_mmengine_would_import_and_call_is_refused(tmp_path):
    marker = tmp_path / 'marker'
    path = tmp_path / 'config.py'
    path.write_text(f"model = dict(type='subprocess.getoutput', cmd='touch {marker}')\n")
    with pytest.raises(BundleError, match=r"type 'subprocess\.getoutput' is not the name of a registered class"):
        load_bundle_config(str(path), str(tmp_path))
    assert not marker.exists()


@pytest.mark.parametrize('name', ['this', 'setup', 'evil_plugin', 'os.path', 'Sapiens2'])
def test_custom_imports_other_than_sapiens2_and_its_projects_are_refused_before_any_import(tmp_path, name):
    marker = tmp_path / 'marker'
    (tmp_path / 'evil_plugin.py').write_text(f'open({str(marker)!r}, "w")\n')
    (tmp_path / 'config.py').write_text(f"custom_imports = dict(imports=['sapiens2', {name!r}])\n")
    imported = set(sys.modules)
    with pytest.raises(BundleError, match=rf"^{tmp_path}/config\.py: custom_imports names {re.escape(repr(name))}; "
                       r"a bundle's config imports only sapiens2 and its project packages \(sapiens2_<project>\), "
                       r'nothing was imported: .*tools/deploy/export\.py'):
        load_bundle_config(str(tmp_path / 'config.py'), str(tmp_path))
    assert not marker.exists() and not set(sys.modules) - imported


@pytest.mark.parametrize('name', ['sapiens2_evil', 'sapiens2_evil.models', 'sapiens2_entry'])
def test_custom_imports_of_a_package_in_the_bundle_are_refused(tmp_path, monkeypatch, name):
    marker = tmp_path / 'marker'
    (tmp_path / 'sapiens2_evil').mkdir()
    (tmp_path / 'sapiens2_evil/__init__.py').write_text(f'open({str(marker)!r}, "w")\n')
    (tmp_path / 'sapiens2_evil/models.py').write_text(f'open({str(marker)!r}, "w")\n')
    (tmp_path / 'config.py').write_text(f"custom_imports = dict(imports=[{name!r}])\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # as when the command runs from inside the bundle folder
    with pytest.raises(BundleError, match=rf"custom_imports names '{name}', which is not an installed module"):
        load_bundle_config(str(tmp_path / 'config.py'), str(tmp_path))
    assert not marker.exists()


def test_custom_imports_of_sapiens2_and_an_installed_project_load(tmp_path):
    (tmp_path / 'config.py').write_text("custom_imports = dict(imports=['sapiens2', 'sapiens2_matting'])\n")
    assert load_bundle_config(str(tmp_path / 'config.py'), str(tmp_path)).custom_imports.imports[1] == \
        'sapiens2_matting'
    assert 'sapiens2_matting' in sys.modules


def test_a_config_file_beside_a_bundle_manifest_is_read_as_data_by_load_config(tmp_path):
    """``--model BUNDLE/config.py`` (the torch backend, export, training) reads it as the bundle does."""
    from sapiens2.engine.launch import load_config
    marker = tmp_path / 'marker'
    (tmp_path / 'sapiens2_bundle.json').write_text('{}')
    (tmp_path / 'config.py').write_text(f"_x = open({str(marker)!r}, 'w')\n")
    with pytest.raises(BundleError, match=rf"^{tmp_path}/config\.py, line 1: a call to open; {HOW}"):
        load_config(str(tmp_path / 'config.py'))
    assert not marker.exists()
    (tmp_path / 'config.py').write_text("default_scope = 'sapiens2'\n")
    assert load_config(str(tmp_path / 'config.py')).to_dict() == dict(default_scope='sapiens2')


def test_mmpose_and_mmseg_apis_read_a_bundles_config_as_data(tmp_path):
    """Their ``init_model`` reads the config with MMEngine's ``Config.fromfile``, which the adaptation routes."""
    from mmpose.apis import init_model as mmpose_init_model
    from mmseg.apis import init_model as mmseg_init_model
    marker = tmp_path / 'marker'
    (tmp_path / 'sapiens2_bundle.json').write_text('{}')
    (tmp_path / 'config.py').write_text(f"_x = open({str(marker)!r}, 'w')\n")
    for init_model in (mmpose_init_model, mmseg_init_model):
        with pytest.raises(BundleError, match=rf"^{tmp_path}/config\.py, line 1: a call to open; {HOW}"):
            init_model(str(tmp_path / 'config.py'), device='cpu')
    assert not marker.exists()


# ------------------------------------------------------------------------------------------- exported bundles
def _with_code(bundles, tmp_path):
    """A copy of the exported pose bundle whose config.py first writes a marker file, and that marker."""
    folder, marker = tmp_path / 'pose', tmp_path / 'marker'
    shutil.copytree(bundles['pose'][0], folder)
    config = folder / 'config.py'
    config.write_text(f"_x = __import__('os').system('touch {marker}')\n" + config.read_text())
    return folder, marker


@needs_ort
def test_the_exported_config_loads_as_fromfile_loads_it(bundles):
    for folder, _, _ in bundles.values():
        path = str(read_bundle(str(folder)).config_path)
        expected = {k: v for k, v in Config.fromfile(path).to_dict().items() if k not in LAYOUT_KEYS}
        assert load_bundle_config(path, str(folder)).to_dict() == expected


@needs_ort
def test_a_bundle_predicts_exactly_as_with_the_config_run_by_fromfile(bundles, monkeypatch):
    from sapiens2.apis.backends.bundle import Bundle
    image = np.random.default_rng(0).integers(0, 255, (90, 70, 3), np.uint8)
    as_data = Sapiens2Inferencer(str(bundles['pose'][0]), device='cpu')([image], show_progress=False)[0]['pose']
    monkeypatch.setattr(Bundle, 'config', lambda bundle: Config.fromfile(bundle.config_path))  # the former reading
    as_code = Sapiens2Inferencer(str(bundles['pose'][0]), device='cpu')([image], show_progress=False)[0]['pose']
    for key in ('keypoints', 'keypoint_scores', 'bboxes'):
        np.testing.assert_array_equal(as_data[key], as_code[key])


@needs_ort
def test_the_cli_refuses_a_bundle_config_with_code_without_running_it(bundles, tmp_path, capsys):
    folder, marker = _with_code(bundles, tmp_path)
    cv2.imwrite(str(tmp_path / 'person.png'), np.full((90, 70, 3), 90, np.uint8))
    assert infer_main([str(tmp_path / 'person.png'), '--model', str(folder), '--out', str(tmp_path / 'out'),
                       '--quiet', '--device', 'cpu']) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f'{folder}/config.py, line 1: a call to __import__' in err and HOW in err
    assert not marker.exists()


@needs_ort
def test_the_inferencer_refuses_a_bundle_config_with_code_without_running_it(bundles, tmp_path):
    folder, marker = _with_code(bundles, tmp_path)
    with pytest.raises(BundleError, match=rf"^{folder}/config\.py, line 1: a call to __import__\('os'\)\.system; "):
        Sapiens2Inferencer(str(folder), device='cpu')
    assert not marker.exists()


# ------------------------------------------------------------------------------------------------ manifest paths
def _bundle(tmp_path, **manifest):
    """A bundle folder (empty model and config files) whose manifest is a valid one updated with ``manifest``."""
    folder = tmp_path / 'b'
    folder.mkdir()
    for name in ('model.onnx', 'config.py', 'model.pt2'):
        (folder / name).write_text('')
    content = dict(schema_version=1, format='sapiens2-bundle', task='pose', onnx=dict(fp32='model.onnx'),
                   config='config.py', input_size=[128, 96], pt2='model.pt2',
                   preprocess=dict(mean=[1, 2, 3], std=[1, 2, 3], bgr_to_rgb=True, in_graph=True),
                   outputs=dict(structure='tensor', names=['output_0'], shapes=[['batch', 308, 32, 24]]))
    (folder / 'sapiens2_bundle.json').write_text(json.dumps(dict(content, **manifest)))
    (tmp_path / 'elsewhere.onnx').write_text('')
    return folder


@pytest.mark.parametrize('field', ['config', 'onnx.fp32', 'onnx.int8', 'pt2'])
@pytest.mark.parametrize('where', ['../elsewhere.onnx', 'absolute', 'sub/../../elsewhere.onnx'])
def test_every_listed_file_outside_the_folder_is_refused(tmp_path, field, where):
    value = str(tmp_path / 'elsewhere.onnx') if where == 'absolute' else where
    key, _, precision = field.partition('.')
    folder = _bundle(tmp_path, **{key: dict({'fp32': 'model.onnx'}, **{precision: value}) if precision else value})
    points = 'an absolute path' if where == 'absolute' else f'a path to {tmp_path}/elsewhere.onnx'
    with pytest.raises(BundleError, match=rf"^{folder}/sapiens2_bundle\.json: {field} is '{value}', {points}, "
                       'outside the bundle folder; bundle files must lie inside the bundle folder'):
        read_bundle(str(folder))


def test_a_symbolic_link_out_of_the_folder_is_refused_and_one_inside_is_read(tmp_path):
    folder = _bundle(tmp_path)
    (folder / 'model.onnx').unlink()
    os.symlink(tmp_path / 'elsewhere.onnx', folder / 'model.onnx')
    with pytest.raises(BundleError, match=rf"onnx\.fp32 is 'model\.onnx', a symbolic link to {tmp_path}/elsewhere"):
        read_bundle(str(folder))
    (folder / 'model.onnx').unlink()
    (folder / 'weights').mkdir()
    (folder / 'weights' / 'model.onnx').write_text('')
    os.symlink(folder / 'weights' / 'model.onnx', folder / 'model.onnx')
    assert read_bundle(str(folder)).onnx_path() == str(folder / 'model.onnx')
