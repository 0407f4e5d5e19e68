# Sapiens2-1b, own body-part classes at 1024x768: the official 1b recipe of
# sapiens2_1b_seg_bodypart29-1024x768.py (optimiser, layer decay, head, schedule, augmentation) on the data and
# metainfo file of configs/_base_/datasets/custom_parts.py (data layout and the three settings there;
# docs/custom_data.md). Your config:
#   _base_ = ['sapiens2::seg/sapiens2_1b_seg_custom-1024x768.py']
#   custom_metainfo = 'my_parts.py'
#   custom_data_root = 'data/my_parts/'
#   load_from = 'seg-1b'
# Read by mmseg's own APIs (init_model, MMSegInferencer) a config inheriting `sapiens2::...` needs `import sapiens2`
# first.
_base_ = ['./sapiens2_1b_seg_bodypart29-1024x768.py', '../_base_/datasets/custom_parts.py']

data_root = None  # custom_data_root is the data folder (a data_root set in your file would not reach the dataloaders)
dataset_type = 'BaseSegDataset'
model = dict(decode_head=dict(num_classes=None, loss_decode=_base_.custom_parts_loss))  # classes of custom_metainfo
train_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_parts_train, pipeline=_base_.train_pipeline))
val_dataloader = dict(dataset=dict(_delete_=True, **_base_.custom_parts_val, pipeline=_base_.test_pipeline))
test_dataloader = val_dataloader
