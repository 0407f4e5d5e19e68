"""The commands of docs/custom_data.md "Try it on a CPU with SynthHumans" run as written (on 16 images, 2
iterations): convert SynthHumans to the 7-class set with left/right pairs and to an own keypoint set, write the
guide's configs, train, test (with the flip TTA that swaps the pairs), and whatever else the section shows."""
import re
import shlex
from pathlib import Path

import pytest
from mmengine.config import Config

from tests.tools.own_layout_runs import ITERS, OTHER_HEAD, REPO, SHORT, SUBSET, run

GUIDE = REPO / 'docs' / 'custom_data.md'
SECTION = '## Try it on a CPU with SynthHumans'
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
        return [tool, *args, '--cfg-options', *SHORT, *OTHER_HEAD]
    args = [checkpoints.get(arg, arg) for arg in args]
    if tool.endswith('test.py'):
        return [tool, *args, '--cfg-options', *SHORT]
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
    assert tools.count('train.py') == tools.count('test.py') == 2 and '--tta' in sum(ran, [])
    assert (tmp_path / 'data' / 'synthhumans_body7' / 'annotations' / 'val').is_dir()
