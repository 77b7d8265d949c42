"""The ``criticore`` command line (Typer + Rich): the app, built from each
job's command.py. No logic here: the commands are in their packages."""

from __future__ import annotations

import re
import sys

import typer

from criticore._core import __version__
from criticore.analysis import command as analyze
from criticore.calibrate import command as calibrate
from criticore.calibrate import mc2_ub
from criticore.cli_common import EXIT_BAD_INPUT, click_errors, usage_error_line
from criticore.imports.command import import_app
from criticore.load import command as load
from criticore.monitor import command as profile
from criticore.monitor.experiment import experiment_app
from criticore.monitor.plot import add_table_plot
from criticore.monitor.tables_command import tables_app
from criticore.optimization import command as optimize
from criticore.regulate import command as regulate
from criticore.report import command as report
from criticore.simulation import command as simulate
from criticore.study.command import study_app

#: The top-level help; `main` appends the registered commands, so it names exactly what exists.
SUMMARY = "criticore: mixed-criticality real-time systems on multicore hardware."

#: Commands that pass what follows `--` on to the processes they start.
EXTRA_ARGS = {"allow_extra_args": True, "ignore_unknown_options": False}

app = typer.Typer(help=SUMMARY, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
plot_app = typer.Typer(help="Plots (PNG or SVG, by the file extension).", no_args_is_help=True)


def version() -> None:
    """Print the criticore version."""
    print(__version__)


def _version_flag(given: bool) -> None:
    if given:
        version()
        raise typer.Exit()


@app.callback()
def _root(
    _version: bool = typer.Option(False, "--version", help="Print the criticore version and exit.", is_eager=True, callback=_version_flag),
) -> None:
    pass


# In the order of the help's command list.
app.command()(analyze.analyze)
app.command()(analyze.check)
app.add_typer(plot_app, name="plot")
add_table_plot(plot_app)
app.add_typer(tables_app, name="tables")
experiment_app.command("mc2-ub")(mc2_ub.command)
app.command("calibrate")(calibrate.command)
app.add_typer(experiment_app, name="experiment")
app.command()(simulate.simulate)
plot_app.command("gantt")(simulate.plot_gantt)
app.command()(report.report)
app.command()(optimize.optimize)
app.add_typer(study_app, name="study")
app.add_typer(import_app, name="import")
app.command()(load.load)
app.command(context_settings=EXTRA_ARGS)(regulate.regulate)
app.command("profile", context_settings=EXTRA_ARGS)(profile.profile_command)
app.command()(version)

#: Option values as click names them in help (`plain_types`).
TYPE_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "Path": "PATH"}

#: An unescaped "[" that Rich would read as a markup tag (a letter, #, / or @ after it).
_TAG = re.compile(r"(?<!\\)\[(?=[A-Za-z#/@])")


def plain_types(command) -> None:
    """Typer prints Python types beside parameters ("<bool>" on every flag,
    "<str>", "<list[Path]>") and braces a required argument in usages, adding
    "..." to a metavar that has it ("{FILE...}..."): print click's style
    instead: nothing on flags, TEXT, INTEGER, NUMBER or PATH on options, and
    FILE, [FILE] or FILE... for arguments."""
    help_option = command.get_help_option(typer.Context(command))
    for p in [*command.params, *([help_option] if help_option else [])]:
        if p.param_type_name == "option":
            if p.is_flag:
                p.metavar = ""
            elif p.metavar is None:
                kind = p.type_descriptor.annotation
                kind = kind.__args__[0] if getattr(kind, "__origin__", None) is list else kind  # a repeatable option
                p.metavar = TYPE_NAMES.get(getattr(kind, "__name__", ""))
        else:
            name = (p.metavar or p.name.upper()).removesuffix("...")
            name += "..." if p.nargs != 1 else ""
            usage = name if p.required else f"[{name}]"
            p.metavar = name
            p.get_usage_pieces = lambda ctx, usage=usage: [usage]
            p.display_type_rich = lambda ctx: None


def escape_help(command) -> None:
    """Escape Rich markup in every help text of the command tree, so that
    "[regulation]" or "[f·PET, PET]" print as written (Typer renders help as
    Rich markup); and the parameters' types as click prints them (`plain_types`)."""
    plain_types(command)
    if command.help:
        command.help = _TAG.sub(r"\\[", command.help)
    for p in command.params:
        if getattr(p, "help", None):
            p.help = _TAG.sub(r"\\[", p.help)
    for sub in getattr(command, "commands", {}).values():
        escape_help(sub)


def summarize(command) -> None:
    """The top-level help: the summary and every registered command, in order."""
    command.help = f"{SUMMARY} Commands: {', '.join(command.commands)}."


def main() -> None:
    command = typer.main.get_command(app)
    summarize(command)
    escape_help(command)
    # Not standalone: click's usage errors come here, to print as one line.
    try:
        rv = command.main(standalone_mode=False)
    except click_errors.ClickException as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # the help is printed already
            raise SystemExit(e.exit_code) from None
        print(usage_error_line(e), file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT if isinstance(e, click_errors.UsageError) else e.exit_code) from None
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        raise SystemExit(1) from None
    raise SystemExit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
