import ferrule


def test_version_matches_the_rust_crates():
    assert ferrule.__version__ == "0.1.0"


def test_problem_media_type_comes_from_the_core():
    assert ferrule.PROBLEM_JSON == "application/problem+json"
