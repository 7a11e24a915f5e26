import dataclasses

import numpy as np
import pytest

from copylib import gluing


@pytest.fixture
def glued(monkeypatch):
    calls = {}

    def fake_glue(key, value, display=True):
        assert display is False
        calls[key] = value

    import myst_nb
    monkeypatch.setattr(myst_nb, "glue", fake_glue)
    return calls


def test_glue_values_glues_every_keyword_as_a_plain_number(glued):
    gluing.glue_values(a=np.float64(1.5), b=3, c=np.array(2.0))
    assert glued == {"a": 1.5, "b": 3, "c": 2.0}
    assert all(type(v) in (int, float) for v in glued.values())


@pytest.mark.parametrize("bad", [float("nan"), np.inf, -np.inf])
def test_a_non_finite_value_is_refused_with_its_key_and_nothing_is_glued(glued, bad):
    with pytest.raises(ValueError, match="'bad_key'"):
        gluing.glue_values(ok=1.0, bad_key=bad)
    assert glued == {}


@pytest.mark.parametrize("bad", ["1.0", None, True, np.ones(2)])
def test_a_value_that_is_not_a_real_number_is_refused(glued, bad):
    with pytest.raises(TypeError, match="'x'"):
        gluing.glue_values(x=bad)


@dataclasses.dataclass(frozen=True)
class _Result:
    jump: float
    n: int
    flag: bool
    label: str


def test_glue_fields_glues_the_numeric_fields_under_the_prefix(glued):
    gluing.glue_fields("sa_", _Result(jump=0.25, n=4, flag=True, label="x"))
    assert glued == {"sa_jump": 0.25, "sa_n": 4}
    glued.clear()
    gluing.glue_fields("sa_", _Result(jump=0.25, n=4, flag=True, label="x"), fields=("n",))
    assert glued == {"sa_n": 4}


def test_glue_fields_refuses_a_non_dataclass(glued):
    with pytest.raises(TypeError, match="result"):
        gluing.glue_fields("p_", {"a": 1})
