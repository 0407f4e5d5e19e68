"""Every rendering option is part of a set's configuration: in ``manifest.json`` only when not at its default (so a
default set's manifest stays that of earlier versions), a set is rendered again when the option changes, and reused
when it does not."""
import json
import os
import os.path as osp

import pytest

from sapiens2.datasets.synthhumans import ensure_synthhumans
from sapiens2.datasets.synthhumans.manifest import OMITTED_AT_DEFAULT

SMALL = dict(num_train=2, num_val=1, size=(64, 48), rgb_only=True)
OPTIONS = dict(scene_variety='rich', patterned_clothes=True, posture_ratio=0.4)


def test_every_omitted_option_is_covered():
    assert set(OPTIONS) == set(OMITTED_AT_DEFAULT)


@pytest.mark.parametrize('option', sorted(OPTIONS))
def test_manifest_records_the_option_and_ensure_renders_again(option, tmp_path):
    root = str(tmp_path / 'synth')
    manifest = osp.join(root, 'manifest.json')
    ensure_synthhumans(root, **SMALL)
    with open(manifest) as f:
        assert option not in json.load(f)
    stamp = os.stat(manifest).st_mtime_ns
    ensure_synthhumans(root, **{option: OPTIONS[option]}, **SMALL)
    with open(manifest) as f:
        assert json.load(f)[option] == OPTIONS[option]
    assert os.stat(manifest).st_mtime_ns != stamp
    stamp = os.stat(manifest).st_mtime_ns
    ensure_synthhumans(root, **{option: OPTIONS[option]}, **SMALL)  # the same configuration is reused
    assert os.stat(manifest).st_mtime_ns == stamp
