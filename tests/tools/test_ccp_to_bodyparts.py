"""tools/dataset_converters/ccp_to_bodyparts.py on a constructed CCP folder (label_list.mat and pixel-level .mat
files written with scipy.io.savemat): the 29-class maps, the rules for skin and one-piece garments, the person
masks, the held-out split and a resumed run."""
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.io import savemat

from sapiens2.metainfo.seg29 import load_seg29
from tests.scripts import load_script

CLASSES = {name: i for i, name in enumerate(load_seg29()['class_names'])}
# A subset of CCP's names in an order of our own: the converter must map by name, not by CCP's ids.
NAMES = ['null', 'hair', 'skin', 'dress', 'shoes', 't-shirt', 'jeans', 'bag', 'sunglasses']
ID = {name: i for i, name in enumerate(NAMES)}
HEIGHT, WIDTH = 100, 40


@pytest.fixture(scope='module')
def tool():
    return load_script('tools/dataset_converters/ccp_to_bodyparts.py')


def person(dress: bool) -> np.ndarray:
    """A standing person from row 10 to row 89 (80 rows): hair, a face, a garment, legs, shoes, a bag."""
    ccp = np.zeros((HEIGHT, WIDTH), np.uint8)
    ccp[10:16, 15:25] = ID['hair']
    ccp[16:24, 16:24] = ID['skin']  # face and neck: rows 6-13 of 80 (top 18 %), above the garment
    ccp[18:20, 17:19] = ID['sunglasses']
    if dress:
        ccp[24:75, 12:28] = ID['dress']  # rows 14-64 of 80
    else:
        ccp[24:50, 12:28] = ID['t-shirt']
        ccp[50:75, 13:27] = ID['jeans']
    ccp[30:50, 8:12] = ID['skin']  # an arm: below the garment's top, left or right unknown
    ccp[75:86, 14:26] = ID['skin']  # legs
    ccp[86:90, 14:26] = ID['shoes']
    ccp[40:50, 28:34] = ID['bag']
    return ccp


def make_ccp(root: Path, count: int = 5) -> Path:
    (root / 'annotations' / 'pixel-level').mkdir(parents=True)
    (root / 'photos').mkdir()
    label_list = np.empty((1, len(NAMES)), object)
    for i, name in enumerate(NAMES):
        label_list[0, i] = np.array([name])
    savemat(root / 'label_list.mat', {'label_list': label_list})
    for i in range(1, count + 1):
        savemat(root / 'annotations' / 'pixel-level' / f'{i:04d}.mat', {'groundtruth': person(dress=i % 2 == 0)})
        cv2.imwrite(str(root / 'photos' / f'{i:04d}.jpg'), np.full((HEIGHT, WIDTH, 3), 10 * i, np.uint8))
    cv2.imwrite(str(root / 'photos' / '0099.jpg'), np.zeros((HEIGHT, WIDTH, 3), np.uint8))  # not annotated
    return root


@pytest.fixture(scope='module')
def converted(tool, tmp_path_factory):
    src = make_ccp(tmp_path_factory.mktemp('ccp'))
    out = tmp_path_factory.mktemp('out') / 'ccp_bodyparts'
    tool.main(['--src', str(src), '--out', str(out), '--num-val', '2'])
    return src, out


def read(path: Path) -> np.ndarray:
    return cv2.imread(str(path), cv2.IMREAD_UNCHANGED)


def test_split_is_the_last_annotated_photos(converted):
    _, out = converted
    assert sorted(p.name for p in (out / 'train' / 'rgb').iterdir()) == ['0001.jpg', '0002.jpg', '0003.jpg']
    assert sorted(p.name for p in (out / 'val' / 'seg').iterdir()) == ['0004.png', '0005.png']
    assert not (out / 'train' / 'rgb' / '0099.jpg').exists()


def test_photo_bytes_are_kept(converted):
    src, out = converted
    assert (out / 'val' / 'rgb' / '0005.jpg').read_bytes() == (src / 'photos' / '0005.jpg').read_bytes()


def test_labels_map_by_name_and_rules(converted):
    _, out = converted
    labels = read(out / 'train' / 'seg' / '0001.png')
    assert labels.dtype == np.uint8 and labels.shape == (HEIGHT, WIDTH)
    ccp = person(dress=False)
    assert (labels[ccp == ID['null']] == CLASSES['Background']).all()
    assert (labels[ccp == ID['hair']] == CLASSES['Hair']).all()
    assert (labels[ccp == ID['sunglasses']] == CLASSES['Eyeglass']).all()
    assert (labels[ccp == ID['t-shirt']] == CLASSES['Upper_Clothing']).all()
    assert (labels[ccp == ID['jeans']] == CLASSES['Lower_Clothing']).all()
    assert (labels[ccp == ID['bag']] == CLASSES['Apparel']).all()
    assert (labels[ccp == ID['shoes']] == 255).all()  # left or right: unknown
    assert (labels[16:24, 16:24][ccp[16:24, 16:24] == ID['skin']] == CLASSES['Face_Neck']).all()
    assert (labels[30:50, 8:12] == 255).all() and (labels[75:86, 14:26] == 255).all()  # arm and legs


def test_one_piece_garment_split_by_height(converted):
    _, out = converted
    labels = read(out / 'train' / 'seg' / '0002.png')
    # rows of the 80-row person from row 10: upper above 10 + 0.36 * 80 = 38.8, lower below 10 + 0.46 * 80 = 46.8
    assert (labels[24:38, 12:28] == CLASSES['Upper_Clothing']).all()
    assert (labels[39:46, 12:28] == 255).all()
    assert (labels[47:75, 12:28] == CLASSES['Lower_Clothing']).all()


def test_person_mask_is_every_labelled_pixel(converted):
    _, out = converted
    for name, dress in (('0004', True), ('0005', False)):
        mask = read(out / 'val' / 'alpha' / f'{name}.png')
        assert mask.dtype == np.uint8 and set(np.unique(mask)) == {0, 255}
        np.testing.assert_array_equal(mask == 255, person(dress) != 0)


def test_mmseg_and_matting_datasets_read_it(converted):
    from mmengine.registry import init_default_scope

    from sapiens2.registry import DATASETS
    _, out = converted
    init_default_scope('mmseg')
    seg = DATASETS.build(dict(type='BodyPart29Dataset', data_root=str(out), img_suffix='.jpg',
                              data_prefix=dict(img_path='train/rgb', seg_map_path='train/seg'),
                              pipeline=[dict(type='LoadImageFromFile'), dict(type='LoadAnnotations')]))
    sample = seg[0]
    assert len(seg) == 3 and sample['gt_seg_map'].shape == (HEIGHT, WIDTH)
    assert CLASSES['Face_Neck'] in np.unique(sample['gt_seg_map'])


def test_rerun_resumes_and_replaces_nothing(tool, converted, capsys):
    src, out = converted
    seg = out / 'train' / 'seg' / '0003.png'
    seg.unlink()
    stamp = (out / 'train' / 'alpha' / '0003.png').stat().st_mtime_ns
    tool.main(['--src', str(src), '--out', str(out), '--num-val', '2'])
    assert '1 written' in capsys.readouterr().out
    assert seg.is_file() and (out / 'train' / 'alpha' / '0003.png').stat().st_mtime_ns == stamp


def test_unmapped_label_name_is_one_clear_error(tool, tmp_path):
    src = make_ccp(tmp_path / 'ccp', count=1)
    label_list = np.empty((1, 2), object)
    label_list[0, 0], label_list[0, 1] = np.array(['null']), np.array(['cloak'])
    savemat(src / 'label_list.mat', {'label_list': label_list})
    with pytest.raises(ValueError, match="'cloak'.*CCP_TO_SEG29"):
        tool.main(['--src', str(src), '--out', str(tmp_path / 'out')])
    assert not (tmp_path / 'out').exists()


def test_every_ccp_name_is_mapped(tool):
    # CCP's 59 names (label_list.mat of github.com/bearpaw/clothing-co-parsing, listed here; no file is read).
    ccp59 = ('null accessories bag belt blazer blouse bodysuit boots bra bracelet cape cardigan clogs coat dress '
             'earrings flats glasses gloves hair hat heels hoodie intimate jacket jeans jumper leggings loafers '
             'necklace panties pants pumps purse ring romper sandals scarf shirt shoes shorts skin skirt sneakers '
             'socks stockings suit sunglasses sweater sweatshirt swimwear t-shirt tie tights top vest wallet watch '
             'wedges').split()
    assert len(ccp59) == 59 and sorted(tool.CCP_TO_SEG29) == sorted(ccp59)
    lookup, one_piece, skin = tool.label_tables(ccp59)
    assert lookup[ccp59.index('null')] == 0 and list(skin) == [ccp59.index('skin')]
    assert sorted(ccp59[i] for i in one_piece) == ['bodysuit', 'dress', 'intimate', 'romper', 'suit', 'swimwear']
