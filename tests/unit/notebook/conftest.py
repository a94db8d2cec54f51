import matplotlib
import pytest

from evolve.notebook import build_example_run, load_run

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def example_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("example") / "run"
    build_example_run(path).close()
    return path


@pytest.fixture
def loaded(example_path):
    with load_run(example_path) as run:
        yield run
