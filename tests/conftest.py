"""Session-wide test settings."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _sizing_cache(tmp_path_factory):
    # The periodic workers remember their phase sizing between runs
    # (crates/criticore-rt/src/workload/sizing_cache.rs): keep the tests'
    # own store, out of the user's ~/.cache, and fresh for each session.
    mp = pytest.MonkeyPatch()
    mp.setenv("CRITICORE_CACHE_DIR", str(tmp_path_factory.mktemp("criticore-cache")))
    yield
    mp.undo()
