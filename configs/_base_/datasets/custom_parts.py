# Own body-part classes from one metainfo file (docs/custom_data.md). A config inheriting a `*_seg_custom-*` config
# sets three things:
#   custom_metainfo = 'my_parts.py'         # dataset_info = dict(classes=(...), palette=[...], flip_pairs=[...],
#                                           # class_weight=[...]); palette, flip_pairs and class_weight optional
#   custom_data_root = 'data/my_parts/'
#   load_from = 'seg-0.4b'                  # optional: fine-tune a seg model (its classifier is re-initialised)
# When the config is loaded, sapiens2 writes them where they belong (sapiens2/utils/custom_layout.py): every
# dataloader's dataset gets data_root and the metainfo (classes, palette, flip_pairs), the decode head its
# num_classes, the training RandomFlip and tta_model the left/right pairs to swap (none without flip_pairs), the
# cross-entropy its class_weight (uniform without).
#
# Data layout (mmseg's: same file names in both folders):
#   <custom_data_root>/images/{train,val}/<name>.jpg
#   <custom_data_root>/annotations/{train,val}/<name>.png   one uint8 class id per pixel, 0 .. C-1 in the order of
#                                                           classes; 255 = not labelled (ignored)
# Other suffixes: img_suffix / seg_map_suffix of the datasets. Validation reports aAcc, mIoU and mAcc.
custom_metainfo = 'sapiens2::_base_/datasets/layouts/person_hair.py'  # an example until you set yours
custom_data_root = 'data/custom_parts/'
custom_parts_train = dict(
    type='BaseSegDataset', img_suffix='.jpg', seg_map_suffix='.png',
    data_prefix=dict(img_path='images/train', seg_map_path='annotations/train'))
custom_parts_val = dict(
    type='BaseSegDataset', img_suffix='.jpg', seg_map_suffix='.png',
    data_prefix=dict(img_path='images/val', seg_map_path='annotations/val'), test_mode=True)
# The official losses without the 29-class weights (the metainfo's class_weight, if any, is written in).
custom_parts_loss = [
    dict(type='Sapiens2SegCrossEntropyLoss', class_weight=None, average='weighted', loss_weight=1.0),
    dict(type='Sapiens2DiceLoss', loss_weight=1.0),
]
