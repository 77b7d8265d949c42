"""`criticore report`: one self-contained HTML page of a task system: its
outline, the analysis' bounds, simulated (and, with a real run, measured)
response times, a Gantt chart with the regulator's intervals and deadlines,
bandwidth and regulation states over time (docs/report.md).

:func:`make_report` (``criticore.make_report``) gathers the data; the page is
:attr:`Report.html` (:mod:`criticore.report.page`, charts in
:mod:`criticore.report.svg`); the CLI is :mod:`criticore.report.command`."""

from __future__ import annotations

from criticore.report.library import Measured, Report, make_report

__all__ = ["Measured", "Report", "make_report"]
