"""hf:// references: repository, revision (branches, commits, the Hub's refs/pr/N) and file name."""
import pytest

from sapiens2.hub.reference import HubReference, is_hub_uri, parse_hub_uri


@pytest.mark.parametrize('uri, expected', [
    ('hf://facebook/sapiens2-pose-1b', HubReference('facebook/sapiens2-pose-1b')),
    ('hf://facebook/sapiens2-pose-1b@v1.0', HubReference('facebook/sapiens2-pose-1b', 'v1.0')),
    (f'hf://facebook/sapiens2-pose-1b@{"a" * 40}/sapiens2_1b_pose.safetensors',
     HubReference('facebook/sapiens2-pose-1b', 'a' * 40, 'sapiens2_1b_pose.safetensors')),
    ('hf://facebook/sapiens2-pose-1b/weights/model.safetensors',
     HubReference('facebook/sapiens2-pose-1b', None, 'weights/model.safetensors')),
    ('hf://org/repo@refs/pr/3/model.safetensors', HubReference('org/repo', 'refs/pr/3', 'model.safetensors')),
    ('hf://models/org/repo@main', HubReference('org/repo', 'main')),
])
def test_parse(uri, expected):
    assert parse_hub_uri(uri) == expected


def test_uri_round_trip():
    for uri in ('hf://org/repo', 'hf://org/repo@dev', 'hf://org/repo@dev/a/b.pth', 'hf://org/repo/b.pth'):
        assert parse_hub_uri(uri).uri() == uri


@pytest.mark.parametrize('uri', ['hf://repo-only', 'hf://org/repo@', 'hf://org/repo//x.pth', 'hf://org/repo/dir/',
                                 'hf://org/re po', 'hf://'])
def test_malformed_references_are_rejected(uri):
    with pytest.raises(ValueError, match='not a valid Hub reference'):
        parse_hub_uri(uri)


def test_only_model_repositories():
    with pytest.raises(ValueError, match='only model repositories'):
        parse_hub_uri('hf://datasets/org/data')
    with pytest.raises(ValueError, match='not a Hub reference'):
        parse_hub_uri('facebook/sapiens2-pose-1b')
    assert is_hub_uri('hf://a/b') and not is_hub_uri('pose-1b')
