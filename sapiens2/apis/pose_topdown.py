from sapiens2.apis.pose_video.topdown import check_bboxes, detect_persons, inference_pose_topdown, init_person_detector  # noqa: F401,E501  (the path docs/pose.md once showed)
