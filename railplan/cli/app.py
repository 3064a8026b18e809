"""The typer app, command discovery and the one place that turns errors into exit codes.

Exit codes: 0 done, 1 a check found problems (``asbuilt``, ``grade``), 2 bad input (one
sentence per problem), 70 an internal error (a bug: "please report", never a traceback unless
``RAILPLAN_DEBUG=1``), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).
"""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil
import signal
import sys
import threading
from pathlib import Path

import typer

try:  # typer >= 0.20 vendors click as typer._click
    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - older typer uses click itself
    from click.exceptions import (  # type: ignore[no-redef, assignment, import-not-found, unused-ignore]
        ClickException,
        NoArgsIsHelpError,
        UsageError,
    )

from railplan.errors import RailplanError
from railplan.render.atomic import discard_temporaries, stopping

app = typer.Typer(
    name="railplan",
    help="Plan, bill, analyze and document the back-end network of a GPU cluster.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

EXIT_INTERNAL = 70  # EX_SOFTWARE in BSD sysexits.h
#: longest line an error prints; a longer one keeps its start and its end (the fix)
MAX_LINE = 600
#: signals that end a run cleanly (temp files removed), with their exit codes and words
_STOPS = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}


def _show_version(value: bool) -> None:
    if value:
        from railplan.version import __version__

        typer.echo(f"railplan {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the version and exit.",
        callback=_show_version,
        is_eager=True,
    ),
) -> None:
    # the app's own options; every command is a module cmd_*.py that imports its work lazily
    del version


def _load_commands() -> None:
    here = str(Path(__file__).resolve().parent)
    for info in sorted(pkgutil.iter_modules([here]), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            importlib.import_module(f"railplan.cli.{info.name}")


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE:
        return line
    half = MAX_LINE // 2
    return f"{line[:half]} [... {len(line) - 2 * half:,} characters cut ...] {line[-half:]}"


def error(message: str) -> None:
    """Print an error on stderr: one line per problem, each prefixed with ``railplan: error:``."""
    from railplan.safe_text import visible  # no control byte of a quoted input reaches stderr

    if stopping():  # a signal is ending the run: its one line is the last word
        threading.Event().wait(60)
        return
    lines = str(message).strip().splitlines() or ["unknown error"]
    for line in lines[:200]:
        print(f"railplan: error: {visible(_clip(line))}", file=sys.stderr)
    if len(lines) > 200:
        print(f"railplan: error: ... and {len(lines) - 200} more lines", file=sys.stderr)


def _internal(exc: BaseException) -> None:
    if stopping():
        threading.Event().wait(60)
        return
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        where = f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"
        tb = tb.tb_next
    print(
        f"railplan: internal error: {type(exc).__name__}{where}: {_clip(str(exc))[:300]}\n"
        "railplan: this is a bug in railplan, not a problem with your input; please report it "
        "with the command you ran (RAILPLAN_DEBUG=1 prints the full traceback)",
        file=sys.stderr,
    )


def _debug() -> bool:
    return os.environ.get("RAILPLAN_DEBUG", "") not in ("", "0")


def _run(argv: list[str] | None) -> int:
    """Run one command; returns the exit code (errors become codes, never tracebacks)."""
    _load_commands()
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="railplan", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except NoArgsIsHelpError as exc:  # `railplan` or `railplan catalog` alone: the help, as is
        print(exc.ctx.get_help() if exc.ctx is not None else exc.format_message(), file=sys.stderr)
        return 2
    except UsageError as exc:
        ctx = exc.ctx
        hint = f" (see 'railplan {ctx.info_name} --help')" if ctx is not None and ctx.parent else ""
        from railplan.sentences import plain

        error(plain(exc.format_message()).rstrip(".") + hint)
        return 2
    except ClickException as exc:
        error(exc.format_message())
        return 2
    except RailplanError as exc:
        error(str(exc))
        return 2
    except KeyboardInterrupt:
        discard_temporaries()
        print("railplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if _debug():
            raise
        discard_temporaries()
        _internal(exc)
        return EXIT_INTERNAL
    return code if isinstance(code, int) else 0


def _watch(read_fd: int) -> None:
    """The signal thread: on SIGINT/SIGTERM remove temp files, say so and end the process.

    It reads the signal numbers Python's C-level handler writes to the wakeup fd, in whatever
    thread the kernel delivered the signal to, so it acts at once even while the main thread
    is inside a CP-SAT solve.
    """
    while True:
        try:
            data = os.read(read_fd, 64)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        for number in data:
            if number in _STOPS:
                code, word = _STOPS[signal.Signals(number)]
                discard_temporaries(stop=True)
                tty = "\x1b[?25h" if sys.stderr.isatty() else ""  # a progress bar hid the cursor
                os.write(2, f"{tty}\nrailplan: {word}\n".encode())
                os._exit(code)


def _ignore(_signum: int, _frame: object) -> None:
    """Python-level handler: nothing; the signal thread does the work (see ``_guarded``)."""


def _guarded(argv: list[str] | None) -> int:
    """``_run`` with SIGINT and SIGTERM handled by a thread of their own.

    The C-level handler Python installs for a signal writes its number to a wakeup fd, which a
    thread reads: cleanup and exit happen at once, even while the main thread waits inside
    OR-Tools. CP-SAT would install its own SIGINT handler while it solves and reset it to the
    default action when it returns (``SigintHandler::~SigintHandler`` in OR-Tools'
    ``ortools/util/sigint.cc`` calls ``signal(SIGINT, SIG_DFL)``), so a later Ctrl-C killed
    the process with temp files left; railplan's solvers set ``catch_sigint_signal = False``
    so the handler stays. Exit codes follow bash's 128 + signal number convention.
    """
    try:
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (OSError, ValueError):  # a platform without fd wakeups: Ctrl-C as Python does it
        return _run(argv)
    previous = {s: signal.signal(s, _ignore) for s in _STOPS}
    threading.Thread(target=_watch, args=(read_fd,), name="railplan-signals", daemon=True).start()
    try:
        return _run(argv)
    finally:
        signal.set_wakeup_fd(old_fd)
        for s, handler in previous.items():
            signal.signal(s, handler)
        os.close(write_fd)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run a command; bad input exits 2 with a sentence, never a traceback.

    Run from the console (``argv`` None) SIGINT and SIGTERM end the run cleanly at any point,
    except in the TUI, which handles its own keys. Tests call ``main([...])`` in-process and
    keep their own signal handling.
    """
    args = sys.argv[1:] if argv is None else argv
    use_thread = argv is None and args[:1] != ["tui"]
    if not use_thread:
        sys.exit(_run(argv))
    _console_run(argv)


def _console_run(argv: list[str] | None) -> None:
    """One batch command from the console, with the cyclic collector off until the process ends.

    The job's objects live to the end and hold no cycles (``railplan/gc_pause.py``); the few
    cyclic ones wait for ``os._exit`` instead of a collection. Left on, the collector walks the
    whole design once ``build`` returns (1 s after a 131,072-GPU plan) and keeps walking it
    while the handouts are drawn (``bench/bench_gc.py``).
    """
    gc.disable()
    _exit_now(_guarded(argv))


def _exit_now(code: int) -> None:
    """End a console run once its output is flushed, without tearing the heap down.

    Every file is already written and renamed into place (``render.atomic``), so all that is
    left at exit is freeing the job's objects one by one: 2.5 s after a 131,072-GPU plan.
    ``os._exit`` skips that; the standard streams are flushed first (an exit code of 0 is
    kept when the reader has gone: ``head`` closing the pipe is not an error).
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # the reader left, or the stream was closed
            pass
        except OSError:
            code = code or 1
    if "logging" in sys.modules:  # its handlers flush at exit (a library may have added one)
        sys.modules["logging"].shutdown()
    os._exit(code)
