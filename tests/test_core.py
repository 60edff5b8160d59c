"""The core's vocabularies and seeding, its error classes, and the process settings that moved
out of import time: thread defaults (``apply_thread_defaults``) and Hub access (``offline``)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robustness as rb
from robustness.core import names, seeding
from robustness.core.errors import ModelError, RobustnessError, StudyError
from robustness.study import ModelConfig, study_from_dict

REPO = Path(__file__).resolve().parents[1]


# -- vocabularies and seeding -------------------------------------------------------------------


def test_every_vocabulary_is_the_one_in_names():
    import perturbations
    from analyses import synthetic
    from robustness import runners, study
    from robustness.core import table
    from robustness.core.items import _item as items

    assert perturbations.FAMILY_ORDER is names.FAMILY_ORDER
    assert synthetic.FAMILIES is names.FAMILY_ORDER
    assert set(perturbations.REGISTRY) == set(names.FAMILY_ORDER)
    assert items.DATASET_TYPES is names.DATASET_TYPES and items.SCALES is names.SCALES
    assert frozenset(names.MODES) == table.MODES
    assert frozenset(names.SCALES) == table.SCALES
    assert study.BACKENDS is runners.BACKENDS is names.BACKENDS
    assert study.DTYPES is runners.DTYPE_NAMES is names.DTYPES
    assert study.MODES is names.MODES


def test_the_generators_are_seeded_from_the_key():
    # an independent derivation: the first 16 bytes of SHA-256(key) as four little-endian words
    key = "demo\x1fq1\x1foption_order"
    digest = hashlib.sha256(key.encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in (0, 4, 8, 12)]
    want = np.random.Generator(np.random.PCG64(np.random.SeedSequence([7, *words])))
    item = rb.Item("q1", "demo", "objective", "Q?", ("a", "b"), answer=0)
    got = seeding.family_rng(7, item, "option_order")
    assert np.array_equal(got.integers(0, 2**31, 8), want.integers(0, 2**31, 8))
    assert (
        seeding.study_rng(7, "formatting").random() != seeding.study_rng(8, "formatting").random()
    )


def test_the_lazy_package_lists_and_finds_every_public_name():
    assert set(rb.__all__) <= set(dir(rb))
    for name in rb.__all__:
        assert getattr(rb, name) is not None, name
    # importing the module robustness.run must not hide the function robustness.run
    import robustness.run  # noqa: F401

    assert callable(rb.run) and callable(rb.perturb) and callable(rb.format_search)
    import analyses
    import analyses.gee
    import analyses.pss

    assert callable(analyses.gee) and callable(analyses.pss)
    assert set(analyses.__all__) <= set(dir(analyses))
    for name in analyses.__all__:  # every lazy name resolves to its module's object
        assert getattr(analyses, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rb.nope  # noqa: B018


def test_lazy_exports_load_on_first_use_and_name_the_closest_public_name():
    import importlib
    import sys
    import types

    from robustness.core.lazy import LazyPackage, lazy_exports

    package = types.ModuleType("lazy_probe")
    sys.modules["lazy_probe"] = package
    try:
        lazy_exports("lazy_probe", {"sqrt": "math", "dumps": "json"})
        assert isinstance(package, LazyPackage)
        assert {"sqrt", "dumps"} <= set(dir(package)) and "_lazy_exports" not in dir(package)
        assert "sqrt" not in vars(package)  # nothing loaded until read
        assert package.sqrt(9.0) == 3.0 and "sqrt" in vars(package)
        with pytest.raises(AttributeError, match=r"'lazy_probe' has no .*'dump'.*mean 'dumps'"):
            package.dump  # noqa: B018
        with pytest.raises(AttributeError, match=r"no attribute 'zzz'.*public names\.$"):
            package.zzz  # noqa: B018
        # binding the module that defines a public name keeps the public object
        package.dumps = importlib.import_module("json")
        assert package.dumps is importlib.import_module("json").dumps
        package.other = importlib.import_module("json")  # any other module binds as usual
        assert isinstance(package.other, types.ModuleType)
    finally:
        del sys.modules["lazy_probe"]


def test_a_face_lists_each_public_name_once_and_derives_the_rest(tmp_path):
    from robustness.core.lazy import exports_of

    face = tmp_path / "__init__.py"
    face.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from json import dumps, loads as read\n    from math import sqrt\n"
    )
    assert exports_of(face) == {"dumps": "json", "read": "json", "sqrt": "math"}
    face.write_text("if TYPE_CHECKING:\n    from json import dumps\n    from pickle import dumps\n")
    with pytest.raises(ValueError, match=r"line 3: 'dumps' is imported twice"):
        exports_of(face)
    face.write_text("if TYPE_CHECKING:\n    import json\n")
    with pytest.raises(ValueError, match="only `from module import name`"):
        exports_of(face)
    # the two real faces: __all__ is exactly the block's names (and the version)
    import analyses

    assert rb.__all__ == sorted([*exports_of(rb.__file__), "__version__"])
    assert analyses.__all__ == sorted(exports_of(analyses.__file__))


# -- errors through the project's classes --------------------------------------------------------


def test_core_errors_are_the_projects_classes():
    with pytest.raises(StudyError, match="prompt format: casing 'loud'"):
        rb.Format(casing="loud")
    spec = rb.default_spec(rb.Item("q", "d", "objective", "Q?", ("a", "b"), answer=0))
    with pytest.raises(StudyError, match="prompt spec: labels"):
        spec.with_(labels=("A", "A"))
    with pytest.raises(ValueError, match="has 27 options; at most 26"):  # refused at load now
        rb.Item("big", "d", "objective", "Q?", tuple(f"o{i}" for i in range(27)), answer=0)
    with pytest.raises(StudyError, match="unknown perturbation family 'nope'"):
        rb.perturb([], families="nope")
    with pytest.raises(StudyError, match="n must be a whole number from 0 to 1,000, got -1"):
        rb.perturb([], n=-1)
    from perturbations import make_family

    with pytest.raises(StudyError, match="has no parameter"):
        make_family("option_order", colour=1)
    assert issubclass(StudyError, RobustnessError) and issubclass(StudyError, ValueError)


# -- thread defaults -----------------------------------------------------------------------------


def test_thread_defaults_only_where_the_user_set_nothing(monkeypatch):
    from robustness.runners import apply_thread_defaults

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert apply_thread_defaults() == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert apply_thread_defaults() == {} and os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("numpy"))  # torch already loaded
    assert apply_thread_defaults() == {} and "OMP_WAIT_POLICY" not in os.environ


def test_the_runner_falls_back_to_one_thread_only_when_no_policy_was_set(monkeypatch):
    # hf.configure_threads reads this: torch spins when nobody set a wait policy before it
    from robustness import runners

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert runners.TORCH_IMPORTED_FIRST is True
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")
    assert runners.TORCH_IMPORTED_FIRST is False


def test_the_cli_applies_the_thread_defaults_in_main_not_at_import():
    code = (
        "import json, os, sys\n"
        "import robustness.cli as cli\n"
        "at_import = os.environ.get('OMP_WAIT_POLICY')\n"
        "sys.argv = ['robustness', '--help']\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps([at_import, os.environ.get('OMP_WAIT_POLICY')]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [None, "PASSIVE"]


# -- offline -------------------------------------------------------------------------------------


@pytest.fixture
def loads(monkeypatch):
    """Record HFRunner.from_pretrained's arguments instead of loading anything."""
    hf = pytest.importorskip("robustness.runners.hf")
    seen: list[dict] = []

    def fake(cls, source, **kwargs):
        seen.append({"source": source, **kwargs})
        return "runner"

    monkeypatch.setattr(hf.HFRunner, "from_pretrained", classmethod(fake))
    return seen


def test_make_runner_passes_offline_through(loads):
    from robustness.runners import make_runner

    assert make_runner("hf", "org/name", device="cpu", offline=True) == "runner"
    assert make_runner("hf", "org/name", device="cpu", offline=False) == "runner"
    make_runner("hf", "org/name", device="cpu")
    assert [seen.get("offline", "unset") for seen in loads] == [True, False, "unset"]
    assert loads[0]["source"] == "org/name"
    with pytest.raises(ModelError, match="offline must be true, false or unset, got 'yes'"):
        make_runner("hf", "org/name", offline="yes")


def test_a_study_and_rb_model_carry_offline_to_the_runner(loads):
    from robustness.executors import open_runner

    study = study_from_dict({"models": [{"name": "m", "model": "org/name", "offline": True}]})
    assert study.models[0].offline is True
    open_runner(study.models[0])
    assert loads[-1]["offline"] is True
    assert rb.model("org/name", offline=False).offline is False
    assert ModelConfig().offline is None
    with pytest.raises(StudyError, match="offline must be true or false, got 'yes'"):
        study_from_dict({"models": [{"name": "m", "offline": "yes"}]})


def test_the_encoder_families_name_the_extra_when_torch_is_missing(monkeypatch):
    from perturbations import similarity

    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    with pytest.raises(ModelError, match=r"robustness\[models\]") as info:
        similarity.MiniLMSimilarity().load()
    assert "paraphrase, and lexical_substitution with a threshold" in str(info.value)
    assert "torch not installed" in str(info.value)
