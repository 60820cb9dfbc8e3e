"""``phsym COMMAND ...`` parses with a parser that holds only COMMAND: the same arguments, defaults, help
and errors as the parser of every subcommand, which ``phsym`` alone and ``phsym --help`` still show."""
from __future__ import annotations

import argparse
import importlib

import pytest

from phsym.cli import PLUGINS, build_parser, main

COMMANDS = ["show", *PLUGINS]


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def test_each_plugin_module_adds_exactly_the_command_it_is_listed_for():
    for name, mod in PLUGINS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(mod).add_parser(sub)
        assert list(sub.choices) == [name], mod


@pytest.mark.parametrize("name", COMMANDS)
def test_the_parser_of_one_command_is_that_command_of_the_full_parser(name):
    full, alone = _subparser(build_parser(), name), _subparser(build_parser(name), name)
    assert alone.format_help() == full.format_help()
    assert alone.format_usage() == full.format_usage()
    assert [(a.dest, a.option_strings, a.default, a.nargs, a.required) for a in alone._actions] == \
        [(a.dest, a.option_strings, a.default, a.nargs, a.required) for a in full._actions]
    assert alone.get_default("func") is full.get_default("func")


def test_a_command_line_parses_to_the_same_namespace(tmp_path):
    argv = ["simulate", "netlists/diode_clipper.cir", "--fs", "48k", "--duration", "10m", "--out", "x.csv",
            "--quiet"]
    assert vars(build_parser("simulate").parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_help_and_errors_still_name_every_command(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS), out
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS), out
    with pytest.raises(SystemExit) as exc:
        main(["simulat", "x.cir"])
    assert exc.value.code == 2 and "invalid choice: 'simulat'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["simulate", "x.cir", "--no-such-option"])
    assert "phsym: error: unrecognized arguments: --no-such-option" in capsys.readouterr().err
