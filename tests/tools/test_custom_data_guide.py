"""The commands of docs/custom_data.md "Try it on a CPU with SynthHumans" run as written (on 16 images, 2
iterations): convert SynthHumans to the 7-class set with left/right pairs and to an own keypoint set, write the
guide's configs, train, test (with the flip TTA that swaps the pairs), infer, export and convert to transformers; the
pictures, predictions, export bundle manifest and transformers config are in the model's own layout."""
import json
import re
import shlex
from pathlib import Path

import cv2
import numpy as np
import pytest
from mmengine.config import Config

from sapiens2.config.layout_file import find_layout_file, read_dataset_info, read_parts_metainfo
from sapiens2.structures.layout import class_palette
from tests.tools.own_layout_runs import ITERS, REPO, SHORT, SUBSET, run

GUIDE = REPO / 'docs' / 'custom_data.md'
SECTION = '## Try it on a CPU with SynthHumans'
SUBSET_VAL = int(SUBSET[SUBSET.index('--num-val') + 1])
RENDER = 'python tools/dataset_converters/make_synthhumans.py --out data/synthhumans --num-train 256 --num-val 64'


def guide_blocks() -> list:
    """(language, text) of the fenced code blocks of the section."""
    text = GUIDE.read_text()
    section = text[text.index(SECTION):]
    section = section[:section.index('\n## ', len(SECTION))]
    return re.findall(r'```(\w+)\n(.*?)```', section, flags=re.S)


def guide_commands() -> list:
    commands = []
    for language, text in guide_blocks():
        if language == 'bash':
            commands += [shlex.split(line) for line in text.replace('\\\n', ' ').splitlines() if line.strip()]
    return commands


def guide_configs() -> dict:
    """{file name: content} of the python blocks that start with `# <name>.py`."""
    return {text.splitlines()[0][2:]: text for language, text in guide_blocks()
            if language == 'python' and text.startswith('# ')}


def adapt(command: list, checkpoints: dict) -> list:
    """The guide's command for the test: fewer images, fewer iterations, the checkpoint of the short run."""
    tool = command[1] if command[0] == 'python' else command[0]
    tool = 'tools/infer.py' if tool == 'sapiens2-infer' else tool  # the same program
    args = command[2:] if command[0] == 'python' else command[1:]
    if tool.endswith('synthhumans_to_layout.py'):
        return [tool, *args, *SUBSET]
    if tool.endswith('train.py'):
        return [tool, *args, '--cfg-options', *SHORT]
    args = [checkpoints.get(arg, arg) for arg in args]
    if tool.endswith('test.py'):
        return [tool, *args, '--cfg-options', *SHORT]
    if tool.endswith('infer.py'):  # every point drawn: the scores of a 2-iteration model are low
        return [tool, *args, '--device', 'cpu', '--quiet', '--kpt-thr', '0']
    return [tool, *args]


@pytest.mark.slow
def test_guide_commands_run(synthhumans_root, tmp_path):
    commands = guide_commands()
    assert commands[0] == shlex.split(RENDER)  # the configuration of the synthhumans_root fixture: reuse it
    (tmp_path / 'data').mkdir()
    (tmp_path / 'data' / 'synthhumans').symlink_to(synthhumans_root)
    configs = guide_configs()
    assert sorted(configs) == ['my_parts.py', 'my_pose.py']
    for text in configs.values():  # an own layout is at most 3 edits: metainfo, data folder, load_from
        assert len(re.findall(r'^(?!_base_)\w+ = ', text, flags=re.M)) <= 3
    for name, text in configs.items():
        (tmp_path / name).write_text(text)
    # The guide names the last checkpoint of the configs' schedules; the short runs write iter_<ITERS>.pth.
    checkpoints = {}
    for name in configs:
        max_iters = Config.fromfile(str(tmp_path / name)).train_cfg.max_iters
        stem = name[:-3]
        checkpoints[f'work_dirs/{stem}/iter_{max_iters}.pth'] = f'work_dirs/{stem}/iter_{ITERS}.pth'
    ran = [adapt(command, checkpoints) for command in commands[1:]]
    for command in ran:
        run(command, cwd=tmp_path)
    tools = [Path(c[0]).name for c in ran]
    assert tools.count('train.py') == tools.count('test.py') == tools.count('infer.py') == 2 and '--tta' in sum(ran, [])
    assert tools.count('export.py') == tools.count('convert_checkpoint.py') == 1
    assert (tmp_path / 'data' / 'synthhumans_body7' / 'annotations' / 'val').is_dir()
    check_outputs(tmp_path)


def check_outputs(root: Path) -> None:
    """The guide's outputs are in the layouts of my_parts (body7) and my_pose (upper_body10)."""
    layouts = {name: find_layout_file(Config.fromfile(str(root / f'{name}.py')).custom_metainfo)
               for name in ('my_parts', 'my_pose')}
    parts, pose = read_parts_metainfo(layouts['my_parts']), read_dataset_info(layouts['my_pose'])
    check_seg_pictures(root / 'outputs' / 'my_parts' / 'seg', np.array(parts['palette']))
    check_pose_outputs(root / 'outputs' / 'my_pose' / 'pose', pose)
    sidecar = json.loads((root / 'exports' / 'my_pose' / 'sapiens2_bundle.json').read_text())
    names = {str(i): point['name'] for i, point in pose['keypoint_info'].items()}
    assert sidecar['dataset_meta']['keypoint_id2name'] == names
    assert sidecar['dataset_meta']['keypoint_colors'][2] == pose['keypoint_info'][2]['color']
    assert len(sidecar['dataset_meta']['skeleton_links']) == len(pose['skeleton_info'])
    assert [(r['backend'], r['passed']) for r in sidecar['parity']] == [('torch.export', True)]
    hf_config = json.loads((root / 'hf_my_parts' / 'config.json').read_text())
    assert hf_config['id2label'] == {str(i): name for i, name in enumerate(parts['classes'])}


def check_seg_pictures(folder: Path, palette: np.ndarray) -> None:
    """Each [image | overlay] blends the 7 classes' palette colours (overlay = round((image + colour) / 2)) at the
    predicted labels; none of the 29-class palette's other colours."""
    pictures = sorted(folder.glob('*.png'))
    assert len(pictures) == SUBSET_VAL
    colours = set()
    for path in pictures:
        picture = cv2.imread(str(path)).astype(int)
        image, overlay = np.split(picture, 2, axis=1)
        labels = np.load(path.with_name(path.stem + '_seg.npy'))
        assert labels.max() < len(palette)
        colour = 2 * overlay - image  # the colour blended in, to +-1 (rounding)
        assert np.abs(colour - palette[labels][..., ::-1]).max() <= 1
        colours |= {tuple(c) for c in palette[np.unique(labels)].tolist()}
    assert len(colours) >= 2
    seg29 = {tuple(c) for c in class_palette(None, 29).tolist()}
    assert colours - seg29  # a colour of the own palette that the 29-class palette lacks


def check_pose_outputs(folder: Path, info: dict) -> None:
    """The predictions name the 10 points; each picture shows its last point inside the image (the drawer draws
    the points in order, over the links) in that point's own colour."""
    names = [point['name'] for point in info['keypoint_info'].values()]
    frames = {path.stem: json.loads(path.read_text()) for path in folder.glob('*.json')}
    assert all(frame['keypoint_names'] == names for frame in frames.values())
    pictures = sorted(folder.glob('*.png'))
    assert len(pictures) == SUBSET_VAL == len(frames)
    for path in pictures:
        picture = cv2.imread(str(path))
        height, width = picture.shape[:2]
        person, threshold = frames[path.stem]['instances'][0], frames[path.stem]['kpt_thr_used']
        points = [(index, round(x), round(y)) for index, ((x, y), score) in  # where the drawer puts them
                  enumerate(zip(person['keypoints'], person['keypoint_scores']))
                  if 0 <= round(x) < width and 0 <= round(y) < height and score >= threshold]
        index, x, y = points[-1]
        assert picture[y, x].tolist() == info['keypoint_info'][index]['color'][::-1]
