# Small own-classes segmentation model for CPUs (tests, trying docs/custom_data.md): the tiny SynthHumans recipe
# (sapiens2_tiny_seg_synthhumans-256x192.py; its shipped model is a good load_from) on the data and metainfo file of
# configs/_base_/datasets/custom_parts.py (data layout and the three settings there). SynthHumans in own classes:
# python tools/dataset_converters/synthhumans_to_layout.py --parts FILE --class-map ... --out DIR (docs/custom_data.md).
_base_ = ['./sapiens2_tiny_seg_synthhumans-256x192.py', '../_base_/datasets/custom_parts.py']

data_root = None  # custom_data_root is the data folder (a data_root set in your file would not reach the dataloaders)
dataset_type = 'BaseSegDataset'
model = dict(decode_head=dict(num_classes=None, loss_decode=_base_.custom_parts_loss))  # classes of custom_metainfo
train_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_parts_train, pipeline=_base_.train_pipeline))
val_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_parts_val, pipeline=_base_.test_pipeline))
test_dataloader = val_dataloader
# --tta at this model's 256x192 (the base's tta_pipeline is the 1024x768 one).
tta_pipeline = [_base_.test_pipeline[0],
                dict(type='TestTimeAug', transforms=[[_base_.test_pipeline[1]], _base_.tta_flips,
                                                     [_base_.test_pipeline[2]], [_base_.test_pipeline[3]]])]
