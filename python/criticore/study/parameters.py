"""Everything that determines a study's results: :class:`StudyParams`, the
platform presets and the ``--quick`` sweep."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from criticore.errors import InputError
from criticore.study.catalogue import FULL_GRID, quick_scenarios


# --------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class StudyParams:
    """Everything that determines a study's results (compared on resume)."""

    seed: int = 0
    scenario_ids: tuple[int, ...] = ()
    points: tuple[int, ...] = FULL_GRID
    half_width: float = 0.05
    z: float = 1.96
    batch: int = 50
    max_systems: int = 400
    #: Platform preset of the generated systems: `imx6` (assumed cost constants)
    #: or `imx6-transaction` (calibrated by `criticore calibrate`).
    preset: str = "imx6"

    def identity(self) -> dict:
        out = {
            "seed": self.seed,
            "scenario_ids": list(self.scenario_ids),
            "points": list(self.points),
            "half_width": self.half_width,
            "z": self.z,
            "batch": self.batch,
            "max_systems": self.max_systems,
        }
        # Only a non-default preset is recorded, so folders from before it existed still resume.
        if self.preset != "imx6":
            out["preset"] = self.preset
        return out

    def check(self) -> None:
        """Raise ValueError(field, reason) for an invalid parameter."""
        if not 0 <= self.seed < 2**64:
            raise _ParamError("--seed", "must be between 0 and 2^64 − 1")
        if not self.scenario_ids:
            raise _ParamError("--scenarios", "selects no scenario")
        if not self.points:
            raise _ParamError("--utilization", "no point")
        if not (0 < self.half_width < 0.5):
            raise _ParamError("--half-width", "must be in (0, 0.5)")
        if not (0 < self.z < 10):
            raise _ParamError("--z", "must be in (0, 10)")
        if self.batch < 1:
            raise _ParamError("--batch", "must be at least 1")
        if self.max_systems < 1:
            raise _ParamError("--max-systems", "must be at least 1")
        if self.preset not in PRESETS:
            raise _ParamError("--preset", f"unknown preset {self.preset!r} (one of: {', '.join(PRESETS)})")


#: Platforms a study can run on (`[platform] preset` names with study cost constants).
PRESETS = ("imx6", "imx6-transaction")


#: ``--quick``: six scenarios, U = 0.5, 1.0, …, 16.0, the paper's precision (±0.05 at 95%,
#: at most 400 systems). With the same seed its rows are a subset of the full study's:
#: a system's seed and the stopping rule do not depend on which other points run.
QUICK_POINTS = tuple(range(1, 64, 2))
QUICK_HALF_WIDTH = 0.05
QUICK_MAX_SYSTEMS = 400
QUICK_BATCH = 50


def quick_params(seed: int = 0) -> StudyParams:
    return StudyParams(
        seed=seed,
        scenario_ids=tuple(quick_scenarios()),
        points=QUICK_POINTS,
        half_width=QUICK_HALF_WIDTH,
        batch=QUICK_BATCH,
        max_systems=QUICK_MAX_SYSTEMS,
    )


class _ParamError(ValueError):
    def __init__(self, field: str, reason: str):
        super().__init__(field, reason)
        self.field = field
        self.reason = reason


def _input_error(out: Path, field: str, reason: str) -> InputError:
    return InputError(f"{out}: {field}: {reason}", str(out), field, reason)
