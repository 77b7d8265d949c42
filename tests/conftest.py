"""Session-wide test settings."""

from pathlib import Path

import pytest

# Tests that run real processes against the clock (the runtime and its
# measurements) are marked `runtime`: `make test` runs them alone, one after
# another, after the rest has run on every core (pytest-xdist), so a test
# worker beside them cannot take the CPU their jobs and regulator time.
RUNTIME_DIRS = ("regulate", "load", "calibrate", "monitor")
TESTS = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(item.fspath).relative_to(TESTS).parts
        if len(parts) > 1 and parts[0] in RUNTIME_DIRS:
            item.add_marker(pytest.mark.runtime)


@pytest.fixture(autouse=True, scope="session")
def _sizing_cache(tmp_path_factory):
    # The periodic workers remember their phase sizing between runs
    # (crates/criticore-rt/src/workload/sizing_cache.rs): keep the tests'
    # own store, out of the user's ~/.cache, and fresh for each session.
    mp = pytest.MonkeyPatch()
    mp.setenv("CRITICORE_CACHE_DIR", str(tmp_path_factory.mktemp("criticore-cache")))
    yield
    mp.undo()
