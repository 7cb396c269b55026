"""Shared fixtures: the repository's reference data (tests/data) and a scratch folder."""
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(REPO, "tests", "data")


@pytest.fixture
def data_dir():
    return DATA
