# An own keypoint layout of 10 points (docs/custom_data.md), in mmpose's dataset_info format: the metainfo file of
# configs/_base_/datasets/custom_keypoints.py. `swap` names each point's mirror partner (flip augmentation and flip
# test), `sigmas` are the OKS constants of COCO AP (COCO's values for these joints; the neck as the shoulders),
# colours are RGB.
dataset_info = dict(
    dataset_name='upper_body10',
    keypoint_info={
        0: dict(name='nose', id=0, color=[51, 153, 255], type='upper', swap=''),
        1: dict(name='neck', id=1, color=[51, 153, 255], type='upper', swap=''),
        2: dict(name='left_shoulder', id=2, color=[0, 255, 0], type='upper', swap='right_shoulder'),
        3: dict(name='right_shoulder', id=3, color=[255, 128, 0], type='upper', swap='left_shoulder'),
        4: dict(name='left_elbow', id=4, color=[0, 255, 0], type='upper', swap='right_elbow'),
        5: dict(name='right_elbow', id=5, color=[255, 128, 0], type='upper', swap='left_elbow'),
        6: dict(name='left_wrist', id=6, color=[0, 255, 0], type='upper', swap='right_wrist'),
        7: dict(name='right_wrist', id=7, color=[255, 128, 0], type='upper', swap='left_wrist'),
        8: dict(name='left_hip', id=8, color=[0, 255, 0], type='lower', swap='right_hip'),
        9: dict(name='right_hip', id=9, color=[255, 128, 0], type='lower', swap='left_hip'),
    },
    skeleton_info={
        0: dict(link=('nose', 'neck'), id=0, color=[51, 153, 255]),
        1: dict(link=('neck', 'left_shoulder'), id=1, color=[0, 255, 0]),
        2: dict(link=('neck', 'right_shoulder'), id=2, color=[255, 128, 0]),
        3: dict(link=('left_shoulder', 'left_elbow'), id=3, color=[0, 255, 0]),
        4: dict(link=('right_shoulder', 'right_elbow'), id=4, color=[255, 128, 0]),
        5: dict(link=('left_elbow', 'left_wrist'), id=5, color=[0, 255, 0]),
        6: dict(link=('right_elbow', 'right_wrist'), id=6, color=[255, 128, 0]),
        7: dict(link=('left_shoulder', 'left_hip'), id=7, color=[51, 153, 255]),
        8: dict(link=('right_shoulder', 'right_hip'), id=8, color=[51, 153, 255]),
        9: dict(link=('left_hip', 'right_hip'), id=9, color=[51, 153, 255]),
    },
    joint_weights=[1.0, 1.0, 1.0, 1.0, 1.2, 1.2, 1.5, 1.5, 1.0, 1.0],
    sigmas=[0.026, 0.079, 0.079, 0.079, 0.072, 0.072, 0.062, 0.062, 0.107, 0.107],
)
