"""The typer app, command discovery and the one place that turns errors into exit code 2."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import typer

try:  # typer >= 0.20 vendors click as typer._click
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - older typer uses click itself
    from click.exceptions import ClickException, UsageError  # type: ignore[assignment]

from railplan.errors import RailplanError

app = typer.Typer(
    name="railplan",
    help="Plan, bill, analyze and document the back-end network of a GPU cluster.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _load_commands() -> None:
    here = str(Path(__file__).resolve().parent)
    for info in sorted(pkgutil.iter_modules([here]), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            importlib.import_module(f"railplan.cli.{info.name}")


def error(message: str) -> None:
    """Print an error on stderr: one line per problem, each prefixed with ``railplan: error:``."""
    for line in str(message).strip().splitlines() or ["unknown error"]:
        print(f"railplan: error: {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run a command; bad input exits 2 with a sentence, never a traceback."""
    _load_commands()
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="railplan", standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except UsageError as exc:
        ctx = exc.ctx
        hint = f" (see 'railplan {ctx.info_name} --help')" if ctx is not None and ctx.parent else ""
        error(exc.format_message().rstrip(".") + hint)
        sys.exit(2)
    except ClickException as exc:
        error(exc.format_message())
        sys.exit(2)
    except RailplanError as exc:
        error(str(exc))
        sys.exit(2)
    except KeyboardInterrupt:
        error("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    sys.exit(code if isinstance(code, int) else 0)
