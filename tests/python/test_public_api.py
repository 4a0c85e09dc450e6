"""Every public Python name is used by at least one test, and the generated table of
the surface (tests/api/PUBLIC_API.md) is current."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "api"))
import public_api  # noqa: E402

import spiraltorch as st  # noqa: E402


def test_spiraltorch_has_all_and_every_entry_exists():
    assert st.__all__ and len(set(st.__all__)) == len(st.__all__)
    for name in st.__all__:
        assert hasattr(st, name), name


def test_every_public_name_has_a_test():
    missing = [f"{m}.{n}" for (m, n), files in public_api.references().items() if not files]
    assert not missing, f"{len(missing)} public names have no test: {missing}"


def test_the_generated_table_is_current():
    want = public_api.render()
    have = public_api.TABLE.read_text() if public_api.TABLE.exists() else ""
    if have != want:
        pytest.fail("tests/api/PUBLIC_API.md is stale: run `python tests/api/public_api.py`")
