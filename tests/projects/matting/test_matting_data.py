"""Matting data: the directory dataset, the loading transform's checks, trimaps and the packed target."""
import cv2
import numpy as np
import pytest
from sapiens2_matting import FormatMattingTarget, GenerateTrimap, LoadMattingAnnotations, MattingDirDataset
from sapiens2_matting.datasets.generate_trimap import derive_trimap


def write(path, image):
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), image)
    return str(path)


def make_root(root, names=('a', 'b'), size=(4, 6), folders=('alpha', )):
    for name in names:
        write(root / 'rgb' / f'{name}.png', np.full((*size, 3), 100, np.uint8))
        for folder in folders:
            shape = size if folder in ('alpha', 'trimap') else (*size, 3)
            write(root / folder / f'{name}.png', np.full(shape, 255, np.uint8))
    return root


def test_dataset_pairs_files_and_uses_the_optional_folders_present(tmp_path):
    root = make_root(tmp_path, folders=('alpha', 'foreground', 'trimap'))
    data = MattingDirDataset(data_root=str(root), lazy_init=False).load_data_list()
    assert [d['sample_name'] for d in data] == ['a', 'b']
    assert data[0]['alpha_path'].endswith('alpha/a.png') and data[0]['trimap_path'].endswith('trimap/a.png')
    assert 'background_path' not in data[0] and data[0]['foreground_premultiplied'] is False
    data = MattingDirDataset(data_root=str(root), optional_folders=('foreground', )).load_data_list()
    assert 'trimap_path' not in data[0] and 'foreground_path' in data[0]


def test_dataset_names_missing_files(tmp_path):
    root = make_root(tmp_path, names=('a', 'b'), folders=())
    write(root / 'alpha' / 'a.png', np.zeros((4, 6), np.uint8))
    with pytest.raises(FileNotFoundError, match=r"1 of 2 images .*\['b'\]"):
        MattingDirDataset(data_root=str(root)).load_data_list()
    write(root / 'alpha' / 'b.png', np.zeros((4, 6), np.uint8))
    write(root / 'background' / 'a.png', np.zeros((4, 6, 3), np.uint8))
    with pytest.raises(FileNotFoundError, match="background.* exists but 1 of 2"):
        MattingDirDataset(data_root=str(root)).load_data_list()
    with pytest.raises(ValueError, match='unknown optional folders'):
        MattingDirDataset(data_root=str(root), optional_folders=('matte', ))


def results_for(root, name='a', premultiplied=False):
    data = MattingDirDataset(data_root=str(root), foreground_premultiplied=premultiplied).load_data_list()
    info = next(d for d in data if d['sample_name'] == name)
    info['img'] = cv2.imread(info['img_path'])
    return info


def test_loading_reads_8_and_16_bit_and_premultiplies_the_foreground(tmp_path):
    root = make_root(tmp_path, names=('a', ), folders=())
    write(root / 'alpha' / 'a.png', np.array([[0, 32768, 65535]], np.uint16))
    write(root / 'rgb' / 'a.png', np.zeros((1, 3, 3), np.uint8))
    write(root / 'foreground' / 'a.png', np.array([[[0, 0, 255], [0, 0, 255], [0, 0, 255]]], np.uint8))  # red
    write(root / 'background' / 'a.png', np.full((1, 3, 3), 51, np.uint8))
    write(root / 'trimap' / 'a.png', np.array([[0, 77, 255]], np.uint8))
    results = LoadMattingAnnotations()(results_for(root))
    np.testing.assert_allclose(results['gt_alpha'], [[0, 32768 / 65535, 1]], atol=1e-6)
    np.testing.assert_allclose(results['gt_foreground'][0, :, 0], results['gt_alpha'][0], atol=1e-6)  # R * alpha
    assert results['gt_foreground'][..., 1:].max() == 0
    np.testing.assert_allclose(results['gt_background'], 0.2, atol=1e-6)
    np.testing.assert_array_equal(results['gt_trimap'], [[0, 128, 255]])
    assert results['gt_mask'].all() and results['gt_image'].shape == (1, 3, 3)


def test_loading_errors_name_the_file_and_the_fix(tmp_path):
    root = make_root(tmp_path, names=('a', ), size=(4, 6), folders=())
    path = root / 'alpha' / 'a.png'
    write(path, np.zeros((5, 6), np.uint8))
    with pytest.raises(ValueError, match='same size'):
        LoadMattingAnnotations()(results_for(root))
    write(path, np.zeros((4, 6, 4), np.uint8))
    with pytest.raises(ValueError, match='RGBA'):
        LoadMattingAnnotations()(results_for(root))
    colour = np.zeros((4, 6, 3), np.uint8)
    colour[..., 1] = 9
    write(path, colour)
    with pytest.raises(ValueError, match='greyscale'):
        LoadMattingAnnotations()(results_for(root))
    tif = root / 'alpha' / 'a.tif'
    path.unlink()
    write(tif, np.zeros((4, 6), np.float32))
    with pytest.raises(ValueError, match='float32 pixels.*8- or 16-bit'):
        LoadMattingAnnotations()(results_for(root))
    tif.write_bytes(b'not an image')
    with pytest.raises(OSError, match='cannot read image .*a.tif: the file is empty, truncated, damaged'):
        LoadMattingAnnotations()(results_for(root))


def test_premultiplied_foreground_that_exceeds_alpha_is_refused(tmp_path):
    root = make_root(tmp_path, names=('a', ), folders=())
    write(root / 'alpha' / 'a.png', np.full((4, 6), 64, np.uint8))
    write(root / 'foreground' / 'a.png', np.full((4, 6, 3), 200, np.uint8))
    with pytest.raises(ValueError, match='not pre-multiplied.*foreground_premultiplied=False'):
        LoadMattingAnnotations()(results_for(root, premultiplied=True))
    results = LoadMattingAnnotations()(results_for(root, premultiplied=False))
    np.testing.assert_allclose(results['gt_foreground'], 200 / 255 * 64 / 255, atol=1e-6)
    write(root / 'trimap' / 'a.png', np.zeros((4, 6), np.uint16))
    with pytest.raises(ValueError, match='trimap.*8-bit greyscale'):
        LoadMattingAnnotations()(results_for(root))


def test_trimap_from_alpha_by_hand():
    alpha = np.tile(np.array([0.0, 0.0, 0.5, 1.0, 1.0], np.float32), (5, 1))
    np.testing.assert_array_equal(derive_trimap(alpha, 1)[2], [0, 128, 128, 128, 255])
    np.testing.assert_array_equal(derive_trimap(alpha, 0)[2], [0, 0, 128, 255, 255])
    results = GenerateTrimap(radius=(1, 1))(dict(gt_alpha=alpha))
    np.testing.assert_array_equal(results['gt_trimap'][2], [0, 128, 128, 128, 255])
    given = np.zeros((5, 5), np.uint8)
    assert GenerateTrimap()(dict(gt_alpha=alpha, gt_trimap=given))['gt_trimap'] is given
    assert GenerateTrimap(keep_existing=False)(dict(gt_alpha=alpha, gt_trimap=given))['gt_trimap'] is not given
    with pytest.raises(ValueError, match='radius'):
        GenerateTrimap(radius=(3, 1))
    with pytest.raises(KeyError, match='LoadMattingAnnotations'):
        GenerateTrimap()(dict())


def test_target_layout_with_and_without_composition():
    alpha = np.array([[0.25, 1.0]], np.float32)
    results = dict(gt_alpha=alpha, gt_trimap=np.array([[128, 255]], np.uint8),
                   gt_background=np.full((1, 2, 3), 0.5, np.float32),
                   gt_image=np.array([[[255, 0, 0], [0, 0, 255]]], np.uint8), gt_mask=np.ones((1, 2), bool))
    target = FormatMattingTarget()(dict(results))['gt_matting']
    assert target.shape == (1, 2, 11) and target.dtype == np.float32
    np.testing.assert_array_equal(target[0, :, 0], [0.25, 1.0])
    assert np.isnan(target[..., 1:4]).all()  # no foreground
    np.testing.assert_array_equal(target[0, :, 4], [0.5, 1.0])
    np.testing.assert_array_equal(target[..., 5:8], 0.5)
    np.testing.assert_array_equal(target[0, 0, 8:11], [0, 0, 1])  # BGR blue -> RGB (0, 0, 1)
    assert FormatMattingTarget(with_composition=False)(dict(results))['gt_matting'].shape == (1, 2, 5)
    with pytest.raises(KeyError, match='GenerateTrimap'):
        FormatMattingTarget()(dict(gt_alpha=alpha))
