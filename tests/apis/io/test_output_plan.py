"""The output plan of a run: claims that can name one file are refused in one line, before anything is written."""
import pytest

from sapiens2.apis.io.output_plan import Family, OutputPlan

CROPS = Family('o/people/a', r'_(person|track)\d+_(seg|normal)\.(npy|png)', '_person0_seg.npy')


def _refused(plan, pattern):
    with pytest.raises(ValueError, match=pattern):
        plan.check()


def test_equal_paths_of_two_owners_are_refused_case_insensitively_and_one_owner_may_repeat_a_claim():
    plan = OutputPlan()
    plan.claim('o/pose/a.png', 'input a')
    plan.claim('o/pose/a.png', 'input a')
    plan.check()
    with pytest.raises(ValueError, match=r'^two outputs of this run are named o/pose/A\.png: input a and input A; '
                       r'rename one of these inputs \(nothing was written\)$'):
        plan.claim('o/pose/A.png', 'input A')


def test_a_path_that_a_family_produces_is_refused_and_others_are_not():
    plan = OutputPlan()
    plan.claim_family(CROPS, 'crops of a')
    for path in ('o/people/a_person0_seg.json', 'o/people/a_person0_segx.png', 'o/people/b_person0_seg.png',
                 'o/people/a.png', 'o/people/a_person0_seg_person1_seg.png'):
        plan.claim(path, f'owner of {path}')
    plan.check()
    assert plan.covers('o/people/a_track12_normal.png') and not plan.covers('o/people/a_track_normal.png')
    plan.claim('o/people/a_person3_seg.png', 'picture of a_person3_seg')
    _refused(plan, r'named o/people/a_person3_seg\.png: crops of a and picture of a_person3_seg')


def test_two_families_that_can_produce_one_name_are_refused():
    plan = OutputPlan()
    plan.claim_family(CROPS, 'crops of a')
    plan.claim_family(Family('o/people/a_person1', r'_\w+\.png', '_seg.png'), 'frames of a_person1')
    _refused(plan, r'named o/people/a_person1_seg\.png: crops of a and frames of a_person1')
    plan = OutputPlan()
    plan.claim_family(CROPS, 'crops of a')
    plan.claim_family(Family('o/people/a_person0_seg', r'_(person|track)\d+_(seg|normal)\.(npy|png)',
                             '_person0_seg.npy'), 'crops of a_person0_seg')
    plan.check()


def test_a_file_where_another_output_needs_a_folder_is_refused():
    plan = OutputPlan()
    plan.claim('o/seg/x.png', 'picture of x.png')
    plan.claim('o/seg/x.png/y.png', 'picture of x.png/y')
    _refused(plan, r'named o/seg/x\.png: picture of x\.png/y \(as a folder\) and picture of x\.png')


def test_a_family_example_must_match_its_pattern():
    with pytest.raises(ValueError, match='its example does not match its pattern'):
        OutputPlan().claim_family(Family('o/a', r'_\d+\.png', '_x.png'), 'a')
