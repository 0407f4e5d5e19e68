"""tools/dataset_converters/teacher_masks_to_dense.py on constructed photos and soft masks: the split decides the
photos, those without a mask are left out, the alpha is the mask, seg is background or ignored, a rerun keeps files."""
import json

import cv2
import numpy as np
import pytest

from tests.scripts import load_script


@pytest.fixture(scope='module')
def tool():
    return load_script('tools/dataset_converters/teacher_masks_to_dense.py')


def _folder(tmp_path):
    """Three photos: a and b in the split (b without a mask), c with a mask but held out."""
    (tmp_path / 'images').mkdir()
    (tmp_path / 'masks').mkdir()
    mask = np.zeros((20, 10), np.uint8)
    mask[5:15, 3:7] = 255
    mask[4, 3:7] = 128  # the soft edge: neither sure background nor sure person
    mask[3, 3:7] = 5  # below 0.05 x 255: background
    for stem in 'abc':
        cv2.imwrite(str(tmp_path / 'images' / f'{stem}.jpg'), np.full((20, 10, 3), 90, np.uint8))
        if stem != 'b':
            cv2.imwrite(str(tmp_path / 'masks' / f'{stem}.png'), mask)
    split = tmp_path / 'train.json'
    split.write_text(json.dumps(dict(images=[dict(id=1, file_name='a.jpg'), dict(id=2, file_name='b.jpg')])))
    return split, mask


def test_the_split_s_masked_photos_become_alpha_and_sure_background(tool, tmp_path, capsys):
    split, mask = _folder(tmp_path)
    out = tmp_path / 'out'
    args = ['--split', str(split), '--images', str(tmp_path / 'images'), '--masks', str(tmp_path / 'masks'),
            '--out', str(out)]
    tool.main(args)
    assert 'left out' in capsys.readouterr().out
    assert sorted(p.name for p in (out / 'rgb').iterdir()) == ['a.jpg']  # b has no mask, c is not in the split
    assert (out / 'rgb' / 'a.jpg').read_bytes() == (tmp_path / 'images' / 'a.jpg').read_bytes()
    np.testing.assert_array_equal(cv2.imread(str(out / 'alpha' / 'a.png'), cv2.IMREAD_GRAYSCALE), mask)
    seg = cv2.imread(str(out / 'seg' / 'a.png'), cv2.IMREAD_GRAYSCALE)
    assert set(np.unique(seg)) == {0, 255}
    assert (seg[5:15, 3:7] == 255).all() and (seg[4, 3:7] == 255).all() and (seg[3, 3:7] == 0).all()
    assert seg[0, 0] == 0
    (out / 'seg' / 'a.png').write_bytes(b'mine')  # a rerun keeps what is there
    tool.main(args)
    assert (out / 'seg' / 'a.png').read_bytes() == b'mine'


def test_bad_inputs_are_one_line(tool, tmp_path):
    split, _ = _folder(tmp_path)
    with pytest.raises(ValueError, match='not a readable COCO-style file'):
        tool.main(['--split', str(tmp_path / 'masks' / 'a.png'), '--images', str(tmp_path), '--masks',
                   str(tmp_path / 'masks'), '--out', str(tmp_path / 'o')])
    with pytest.raises(FileNotFoundError, match='--masks .*no such folder'):
        tool.main(['--split', str(split), '--images', str(tmp_path), '--masks', str(tmp_path / 'x'),
                   '--out', str(tmp_path / 'o')])
    with pytest.raises(FileNotFoundError, match='a.jpg: no such photo; --images must be the folder'):
        tool.main(['--split', str(split), '--images', str(tmp_path), '--masks', str(tmp_path / 'masks'),
                   '--out', str(tmp_path / 'o')])  # the photos are not under --images
    cv2.imwrite(str(tmp_path / 'images' / 'a.jpg'), np.zeros((21, 10, 3), np.uint8))
    with pytest.raises(ValueError, match='cannot be read, or not of one size'):
        tool.main(['--split', str(split), '--images', str(tmp_path / 'images'), '--masks', str(tmp_path / 'masks'),
                   '--out', str(tmp_path / 'o')])
