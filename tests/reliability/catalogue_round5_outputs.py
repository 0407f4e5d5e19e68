"""Bad-input cases of round 5 (issue 59, first half): a handed bundle imports nothing but sapiens2 and its projects,
no output of a run replaces another (one output-path planner, locks for concurrent runs and shared indexes), people
mode without a silent whole-image person or phantom records, JSON without bare NaN, and one check for every person
box. The cases register into :data:`tests.reliability.catalogue.CASES` (this module is imported at its end)."""
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import cv2
import numpy as np

from tests.reliability.bad_input_files import H, W
from tests.reliability.catalogue import FAULT_TESTS, REPO, CommandError, _command, _one_line, case
from tests.reliability.catalogue_bundle_data import _config_case

SEG_NANO = REPO / 'configs/seg/sapiens2_nano_seg_synthhumans-128x96.py'
POSE_NANO = REPO / 'configs/pose/sapiens2_nano_pose_synthhumans-128x96.py'
MATTING_NANO = REPO / 'projects/matting/configs/sapiens2_nano_matting_synthhumans-128x96.py'


def _not_imported(name: str):
    """``name`` forgotten, and the check that it was not imported again (with the case's one line, files intact)."""
    sys.modules.pop(name, None)

    def verify(err, check):
        check(err)
        assert name not in sys.modules, f'{name} was imported'

    return verify


for _name, _what in (('this', 'printed the Zen of Python'), ('setup', "ran the repository's setup.py")):
    @case(f'bundle-custom-imports-{_name}', 'bundles', f"a bundle whose config.py custom_imports names '{_name}' "
          f'(it {_what}, rc 0)', 'one line: a bundle imports only sapiens2 and its project packages; nothing is '
          'imported', error=CommandError,
          match=rf"^exit 1: sapiens2-infer: error: BundleError: {{tmp}}/b/config\.py: custom_imports names "
          rf"'{_name}'; a bundle's config imports only sapiens2 and its project packages \(sapiens2_<project>\), "
          r'nothing was imported')
    def _(tmp, name=_name):
        trigger, check = _config_case(tmp, f"custom_imports = dict(imports=['sapiens2', '{name}'])\n"
                                      "model = dict(type='Sapiens2')\n")
        verify = _not_imported(name)
        return trigger, lambda err: verify(err, check)


# ------------------------------------------------------------------------------------- outputs: one plan per run
@functools.lru_cache(maxsize=None)
def _inferencer(*configs: Path):
    """A Sapiens2Inferencer of the nano ``configs`` with random weights; pose without the person finder (the whole
    image is the box of an image without boxes)."""
    import torch

    from sapiens2.apis import Sapiens2Inferencer
    torch.manual_seed(0)
    return Sapiens2Inferencer([str(config) for config in configs], device='cpu',
                              task_options=dict(pose=dict(person_finder=None)))


def _picture(path: Path, value: int = 128) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.full((H, W, 3), value, np.uint8))
    return str(path)


def _user_files_kept(tmp: Path, also=None):
    """The check that no file outside ``{tmp}/out`` changed (the hash of every user file), then ``also(result)``."""
    before = _hashes(tmp)

    def verify(result):
        after = {p: h for p, h in _hashes(tmp).items() if 'out' not in p.relative_to(tmp).parts}
        assert after == before, 'a user file changed'
        if also is not None:
            also(result)

    return verify


def _hashes(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob('*')) if p.is_file()}


@case('infer-per-person-crop-named-like-an-input', 'inference outputs', 'inputs a.png and a_person0_seg.png with '
      "--per-person (the second image's people picture was written over a's person-0 crop)", 'refused before '
      'anything is written, naming the path, both outputs and both inputs (the output plan knows the crop names)',
      error=ValueError, match=r'two outputs of this run are named {tmp}/out/people/a_person0_seg\.png: the people '
      r'raw files of input a \({tmp}/in/a\.png\) and the people pictures of input a_person0_seg .*rename one')
def _(tmp):
    for name in ('a', 'a_person0_seg'):
        _picture(tmp / 'in' / f'{name}.png')
    inferencer = _inferencer(SEG_NANO)

    def nothing_written(err):
        assert not [p for p in (tmp / 'out').rglob('*') if p.is_file()], 'files were written'

    return (lambda: inferencer(str(tmp / 'in'), out_dir=str(tmp / 'out'), bboxes={'a': [[2, 2, 40, 60]]},
                               per_person=True, show_progress=False),
            _user_files_kept(tmp, nothing_written))


@case('infer-two-calls-arrays-one-out', 'inference outputs', 'two Sapiens2Inferencer calls with an array each into '
      "one out_dir (the second's array_000000 replaced the first's)", "the second call's array is array_000001 (the "
      "arrays of a call into a folder are numbered on); the first's outputs stay")
def _(tmp):
    inferencer = _inferencer(SEG_NANO)
    first, second = np.full((H, W, 3), 40, np.uint8), np.full((H, W, 3), 200, np.uint8)
    inferencer([first], out_dir=str(tmp / 'out'), show_progress=False)
    kept = _hashes(tmp / 'out/seg')

    def numbered_on(results):
        assert [r['name'] for r in results] == ['array_000001'], [r['name'] for r in results]
        assert {p: h for p, h in _hashes(tmp / 'out/seg').items() if p in kept} == kept, 'the first call changed'
        assert (tmp / 'out/seg/array_000001_seg.npy').is_file()

    return lambda: inferencer([second], out_dir=str(tmp / 'out'), show_progress=False), numbered_on


@case('infer-while-another-run-writes-out', 'inference outputs', 'sapiens2-infer into an --out that another run is '
      'writing (the two interleaved their files)', 'waits for the other run, saying so in one line; then writes',
      warning=UserWarning, kind='OutputFolderBusyNotice',
      match=r'{tmp}/out is being written by another sapiens2 run \(pid \d+\); waiting for it to end')
def _(tmp):
    from sapiens2.apis.io.output_guard import RUN_LOCK_NAME
    from sapiens2.utils.file_lock import exclusive
    inferencer = _inferencer(SEG_NANO)
    held, release = threading.Event(), threading.Event()

    def other_run():
        with exclusive(str(tmp / 'out' / RUN_LOCK_NAME)):
            held.set()
            release.wait(30)

    (tmp / 'out').mkdir()
    threading.Thread(target=other_run, daemon=True).start()
    held.wait(30)
    threading.Timer(0.5, release.set).start()

    def written(_):
        assert (tmp / 'out/seg/a.png').is_file() and not (tmp / 'out' / RUN_LOCK_NAME).exists()

    return lambda: inferencer(_picture(tmp / 'a.png'), out_dir=str(tmp / 'out'), show_progress=False), written


@case('people-index-two-processes', 'inference outputs', 'two processes adding 40 images each to one '
      'people/coco_results.json at the same time (each read the file, added its images and replaced it)',
      "every image of both is in the file (the index's read-modify-write holds its lock)")
def _(tmp):
    script = ('import os, sys, time, sapiens2_entry\n'
              'from sapiens2.apis.people.coco_results import update_coco_results\n'
              'path, me, other = sys.argv[1:]\n'
              'open(f"{path}.{me}", "w").close()\n'
              'while not os.path.exists(f"{path}.{other}"):  # both imported: start together\n'
              '    time.sleep(0.01)\n'
              'for i in range(40):\n'
              '    person = dict(records=[{}], bboxes=[[0, 0, 5, 9]], bbox_scores=[0.9])  # one person, a box\n'
              '    update_coco_results(path, [dict(image_name=f"{me}{i}", result=person)])\n')
    path = tmp / 'people/coco_results.json'
    path.parent.mkdir()

    def both():
        env = dict(os.environ, PYTHONPATH=str(REPO))
        runs = [subprocess.Popen([sys.executable, '-c', script, str(path), me, other], env=env)
                for me, other in (('a', 'b'), ('b', 'a'))]
        return [run.wait(300) for run in runs]

    def none_lost(codes):
        assert codes == [0, 0], codes
        written = {entry['image_name'] for entry in json.loads(path.read_text())}
        assert written == {f'{p}{i}' for p in 'ab' for i in range(40)}, f'{80 - len(written)} images lost'

    return both, none_lost


# ------------------------------------------------------------------------------------------------- people mode
@case('people-pose-without-boxes-or-detector', 'inference', 'people mode with pose and seg, no --bboxes, no '
      'detector and no person finder (one whole-image "person" whose mask is everyone, said nowhere)',
      'a warning per image: the whole image is one person whose mask is all the foreground; pass --bboxes or a '
      'detector',
      warning=UserWarning, kind='PeopleWithoutBoxesWarning',
      match=r'^a: no person boxes \(no --bboxes entry and no person detector\), so the whole image is one person, '
      r'whose mask is all the foreground \(everyone in it\); pass --bboxes or --det-config')
def _(tmp):
    inferencer = _inferencer(POSE_NANO, SEG_NANO)

    def one_person(results):
        assert len(results[0]['people']['records']) == 1

    return lambda: inferencer(_picture(tmp / 'a.png'), people=True, show_progress=False), one_person


@case('people-same-box-twice', 'inference', 'people mode with seg and the same person box twice for one image (a '
      'phantom second record with area 0)', 'one person, and a warning that the repeated box is taken once',
      warning=UserWarning, kind='DuplicateBoxWarning',
      match=r'^a: person box 1 \[2, 2, 40, 60\] repeats box 0; it is taken once \(one person\)')
def _(tmp):
    inferencer = _inferencer(SEG_NANO)

    def one_record(results):
        records = results[0]['people']['records']
        assert len(records) == 1, f'{len(records)} records'

    return (lambda: inferencer(_picture(tmp / 'a.png'), people=True, bboxes={'a': [[2, 2, 40, 60]] * 2},
                               show_progress=False), one_record)


for _box, _shown, _problem in (([60, 70, 90, 99], 'outside', r'lies outside the 48x64 \(width x height\) image'),
                               ([30, 10, 20, 40], 'inverted', r'is empty or inverted')):
    @case(f'people-seg-box-{_shown}', 'inference', f'people mode with seg alone and a box {_shown} the image (an empty '
          'record; pose refused it)', 'refused as with pose: one line naming the image and the box', error=ValueError,
          match=rf'^a: person box 0 {re.escape(json.dumps(_box))} \(xyxy\) {_problem}')
    def _(tmp, box=_box):
        inferencer = _inferencer(SEG_NANO)
        return lambda: inferencer(_picture(tmp / 'a.png'), people=True, bboxes={'a': [box]}, show_progress=False)


# ----------------------------------------------------------------------------------------- one check of a box
def _boxes_cli(tmp: Path, content, *options: str):
    """``sapiens2-infer a.png --bboxes boxes.json`` (written from ``content``, a JSON text or a value) with the nano
    pose config and ``options``; the check that the error is one line and no user file changed."""
    from sapiens2.apis.cli import main
    _picture(tmp / 'a.png')
    (tmp / 'boxes.json').write_text(content if isinstance(content, str) else json.dumps(content))
    trigger = _command(main, [str(tmp / 'a.png'), '--model', str(POSE_NANO), '--out', str(tmp / 'out'), '--quiet',
                              '--bboxes', str(tmp / 'boxes.json'), *options])
    return trigger, _user_files_kept(tmp, _one_line)


for _value, _kind, _said in (('true', 'boolean', r'true is a boolean, not a number'),
                             ('"10"', 'string', r'"10" is a string, not a number \(write it without quotes\)'),
                             ('1e300', 'huge', r'1e\+300 lies beyond 1e\+06 pixels'),
                             ('-3e38', 'minus-3e38', r'-3e\+38 lies beyond 1e\+06 pixels')):
    @case(f'infer-bboxes-{_kind}-value', 'inference', f'a --bboxes box with the value {_value} (read as a number; '
          '1e300 and -3e38 ended in OverflowError tracebacks in assign.py)', 'one line naming the file, the entry and '
          'the value (the shared box check of every box reader)', error=CommandError,
          match=rf"^exit 1: .*error: {{tmp}}/boxes\.json: entry 'a' box 0 has bbox \[.*\]: {_said}; person boxes are "
          r'\[x1, y1, x2, y2\]')
    def _(tmp, value=_value):
        return _boxes_cli(tmp, f'{{"a": [[0, 0, {value}, 20]]}}')


@case('people-matting-nan-box', 'inference', 'sapiens2-infer --task matting --people with a --bboxes box holding NaN '
      '("cannot convert float NaN to integer", no file named)', 'one line naming the file, the entry and the box',
      error=CommandError, match=r"^exit 1: .*error: {tmp}/boxes\.json: entry 'a' box 0 has bbox \[NaN, 0, 10, 20\]: a "
      r'non-finite value \(nan\)')
def _(tmp):
    return _boxes_cli(tmp, '{"a": [[NaN, 0, 10, 20]]}', '--model', str(MATTING_NANO), '--people')


@case('infer-bboxes-coco-negative-width', 'inference', 'a --bboxes COCO annotation file whose box has a negative '
      'width (reported with converted corners, no annotation named)', 'one line naming the file, the annotation and '
      'its id, and the box as written', error=CommandError,
      match=r"^exit 1: .*error: {tmp}/boxes\.json: annotations\[0\] \(id 17\) has bbox \[10, 10, -5, 20\]: a width of "
      r'-5; COCO boxes are 4 numbers \[x, y, width, height\] with width and height > 0')
def _(tmp):
    return _boxes_cli(tmp, dict(images=[dict(id=1, file_name='a.png')],
                                annotations=[dict(id=17, image_id=1, category_id=1, bbox=[10, 10, -5, 20])]))


@case('infer-bboxes-10000-for-one-image', 'inference', '10,000 person boxes for one image (memory grew to 24 GB)',
      'one line naming the file and the entry: at most 1000 boxes are taken for one image (checked again per image '
      'for the API)', error=CommandError,
      match=r"^exit 1: .*error: {tmp}/boxes\.json: entry 'a': 10000 person boxes; at most 1000 are taken for one "
      r'image')
def _(tmp):
    return _boxes_cli(tmp, {'a': [[i % 40, i % 50, i % 40 + 8, i % 50 + 14] for i in range(10000)]})


@case('infer-api-boxes-boolean', 'inference', "Sapiens2Inferencer(...)(image, bboxes={'array_000000': [[True, 0, 10, "
      "20]]}) (True read as 1)", 'one line naming the entry and the boolean', error=ValueError,
      match=r"^bboxes: entry 'array_000000' box 0 has bbox \[true, 0, 10, 20\]: true is a boolean, not a number")
def _(tmp):
    inferencer = _inferencer(POSE_NANO)
    return lambda: inferencer([np.zeros((H, W, 3), np.uint8)], bboxes={'array_000000': [[True, 0, 10, 20]]},
                              show_progress=False)


# ------------------------------------------------------------------------------------------------ JSON, no NaN
def _bare(token: str):
    raise AssertionError(f'a bare {token} token: not JSON')


@case('test-metrics-json-nan', 'inference outputs', 'tools/test.py --out metrics.json with a metric that is NaN (a '
      'bare NaN token: JSON.parse and jq refuse the file)', 'the file is strict JSON, the metric null (every JSON '
      'sapiens2 writes: records, JSON Lines, indexes, manifests)')
def _(tmp):
    from sapiens2.engine.hooks import SaveTestMetricsHook
    path = tmp / 'metrics.json'

    def strict(_):
        metrics = json.loads(path.read_text(), parse_constant=_bare)
        assert metrics == {'PCK': None, 'AUC': 0.5}, metrics

    return lambda: SaveTestMetricsHook(str(path)).after_test_epoch(None, {'PCK': float('nan'), 'AUC': 0.5}), strict


FAULT_TESTS.extend([
    ('two exports into one --out at the same time', 'the second waits for the first, saying so; the bundle\'s manifest '
     'and model file come from one model',
     'tests/deploy/test_export.py::test_two_exports_into_one_folder_at_once_leave_one_models_bundle'),
    ('the holder of an output folder\'s lock is killed (SIGKILL)', 'the next run takes the lock at once and removes '
     'the lock file', 'tests/utils/test_file_lock.py::test_a_killed_holder_releases_the_lock'),
])
