"""Scene properties (semantic-probe labels) follow from the seed alone and are saved with a full set."""
import json
import os.path as osp

from sapiens2.datasets.synthhumans import generate_synthhumans, scene_for
from sapiens2.datasets.synthhumans.properties import PROPERTY_CLASSES, _colour_class, _orientation, scene_properties


def test_properties_are_deterministic_and_in_range():
    first = [scene_properties(scene_for(3, 'train', i, (64, 48))) for i in range(40)]
    assert first == [scene_properties(scene_for(3, 'train', i, (64, 48))) for i in range(40)]
    for name, classes in PROPERTY_CLASSES.items():
        values = {p[name] for p in first}
        assert values <= set(range(len(classes))) and len(values) > 1, name  # every property varies
    assert [p['num_people'] for p in first] == [len(scene_for(3, 'train', i, (64, 48)).persons) - 1
                                                 for i in range(40)]


def test_property_classes_by_hand():
    assert [_orientation(a) for a in (3.1416, 3.1416 + 1.2, 3.1416 - 1.6, 0.3, -0.2)] == [0, 1, 1, 2, 2]
    # BGR colours: grey, red, yellow, green, blue, magenta
    assert [_colour_class(c) for c in ((128, 130, 127), (20, 20, 220), (20, 220, 220), (20, 200, 30),
                                       (220, 40, 20), (220, 20, 200))] == [0, 1, 1, 2, 3, 3]


def test_full_set_saves_the_properties(tmp_path):
    root = generate_synthhumans(str(tmp_path / 'set'), num_train=2, num_val=1, size=(32, 24), seed=5)
    with open(osp.join(root, 'annotations', 'scene_properties_train.json')) as f:
        saved = json.load(f)
    assert saved['classes'] == {k: list(v) for k, v in PROPERTY_CLASSES.items()}
    assert saved['images'] == [dict(file_name=f'train/rgb/{i:06d}.png', **scene_properties(scene_for(5, 'train', i,
                                                                                                    (32, 24))))
                               for i in range(2)]
    with open(osp.join(root, 'manifest.json')) as f:
        assert 'annotations/scene_properties_val.json' in json.load(f)['files']
