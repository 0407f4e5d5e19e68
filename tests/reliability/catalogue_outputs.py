"""Issue 37 cases of the bad-input catalogue: predictions that a later run must not replace, and --bboxes files the
way users have them (a superset of the inputs, COCO annotation files and detection results, malformed entries).
The cases register into :data:`tests.reliability.catalogue.CASES` (this module is imported at its end)."""
import json
from pathlib import Path

import cv2
import numpy as np

from tests.reliability.bad_input_files import H, W
from tests.reliability.catalogue import POSE_NANO, CommandError, _command, _infer_cli, case


def _boxes_file(tmp: Path, content) -> str:
    path = tmp / 'boxes.json'
    path.write_text(json.dumps(content))
    return str(path)


@case('infer-second-run-other-photo', 'inference outputs', 'a second sapiens2-infer with another photo into the same '
      '--out (it rewrote pose/images_predictions.json: the first photo kept its picture, lost its keypoints)',
      "each photo's predictions are its own pose/<name>.json; the first run's stay")
def _(tmp):
    from sapiens2.apis.cli import main
    _infer_cli(tmp, '--device', 'cpu')()  # writes and runs on a.png
    cv2.imwrite(str(tmp / 'b.png'), np.full((H, W, 3), 60, np.uint8))

    def both(_):
        for name in ('a', 'b'):
            assert json.loads((tmp / f'out/pose/{name}.json').read_text())['image_name'] == name, name

    return _command(main, [str(tmp / 'b.png'), '--model', str(POSE_NANO), '--out', str(tmp / 'out'), '--quiet',
                           '--device', 'cpu']), both


@case('infer-bboxes-superset', 'inference', '--bboxes with entries for 3 images, 1 of them in this run (refused as '
      '"2 of 3 --bboxes entries match no input")', "the input's boxes are used; an info line says 1 of 3 entries were "
      'used')
def _(tmp):
    boxes = _boxes_file(tmp, {'a': [[2, 2, W - 2, H - 2]], 'other': [[0, 0, 5, 5]], 'third': []})

    def used(_):
        instances = json.loads((tmp / 'out/pose/a.json').read_text())['instances']
        assert [i['bbox'] for i in instances] == [[2, 2, W - 2, H - 2]], instances

    return _infer_cli(tmp, '--device', 'cpu', '--bboxes', boxes), used


@case('infer-bboxes-none-match', 'inference', '--bboxes whose entries name none of the inputs (keys like "IMG_1.jpg" '
      'for other photos)', 'one line: none of its entries names an input, with examples of the keys and the names',
      error=CommandError, match=r"exit 1: .*error: --bboxes {tmp}/boxes.json: none of its 1 entries names an input of "
      r"this run \(\['IMG_1.jpg'\]\.\.\.\); keys are image names \(\['a'\]\)")
def _(tmp):
    return _infer_cli(tmp, '--bboxes', _boxes_file(tmp, {'IMG_1.jpg': [[0, 0, 5, 5]]}))


@case('infer-bboxes-coco-bad-bbox', 'inference', '--bboxes COCO detection results with a 3-number bbox',
      'one line naming the file, the entry and the [x, y, width, height] form', error=CommandError,
      match=r'exit 1: .*error: {tmp}/boxes.json: entry 1 has bbox \[1, 2, 3\]; COCO boxes are 4 numbers \[x, y, '
      r'width, height\]')
def _(tmp):
    return _infer_cli(tmp, '--bboxes', _boxes_file(tmp, [dict(image_id=1, bbox=[0, 0, 5, 5], score=0.9),
                                                         dict(image_id=1, bbox=[1, 2, 3], score=0.9)]))


@case('infer-bboxes-coco-orphan-annotation', 'inference', '--bboxes COCO annotation file whose annotation names an '
      'image id that "images" lacks', 'one line naming the file, the annotation and the image id', error=CommandError,
      match=r'exit 1: .*error: {tmp}/boxes.json: annotations\[0\] has image_id 7, which no entry of "images" has')
def _(tmp):
    return _infer_cli(tmp, '--bboxes', _boxes_file(tmp, dict(
        images=[dict(id=1, file_name='a.png')], annotations=[dict(id=1, image_id=7, bbox=[0, 0, 5, 5])])))


@case('infer-bboxes-coco-image-without-file-name', 'inference', '--bboxes COCO annotation file with an image entry '
      'without file_name', 'one line naming the file and the entry', error=CommandError,
      match=r'exit 1: .*error: {tmp}/boxes.json: images\[0\] needs "id" and "file_name", got \{"id": 1\}')
def _(tmp):
    return _infer_cli(tmp, '--bboxes', _boxes_file(tmp, dict(images=[dict(id=1)], annotations=[])))


@case('infer-bboxes-two-entries-one-input', 'inference', '--bboxes with entries "a" and "a.png" for the one input a',
      'one line naming both entries: keep one', error=CommandError,
      match=r"exit 1: .*error: --bboxes {tmp}/boxes.json: entries 'a' and 'a.png' both name input a; keep one")
def _(tmp):
    return _infer_cli(tmp, '--bboxes', _boxes_file(tmp, {'a': [[0, 0, 5, 5]], 'a.png': [[1, 1, 6, 6]]}))


@case('infer-output-named-like-the-people-index', 'inference outputs', 'an input named coco_results.png in a --people '
      'run (its people/coco_results.json would be the COCO index of every run)', 'refused before anything is '
      'written, naming the path', error=ValueError,
      match=r'two outputs of this run are named {tmp}/out/people/coco_results.json')
def _(tmp):
    from sapiens2.apis.io.sources import collect_sources
    from sapiens2.apis.io.writer import ResultWriter
    from sapiens2.apis.people import PeopleComposer

    cv2.imwrite(str(tmp / 'coco_results.png'), np.full((H, W, 3), 90, np.uint8))

    composer = PeopleComposer.__new__(PeopleComposer)  # the writer reads only its class attributes
    writer = ResultWriter(str(tmp / 'out'), [composer], save_vis=False)
    return lambda: writer.check_outputs(collect_sources(str(tmp / 'coco_results.png')))
