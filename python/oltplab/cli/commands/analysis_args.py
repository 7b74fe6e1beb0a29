"""Argument parsing shared by the analysis commands (show, compare, table): argparse whose
errors become oltplab's one-line ConfigError."""

import argparse
from typing import NoReturn

from oltplab.exceptions import ConfigError


class AnalysisParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def parser(prog: str, description: str) -> AnalysisParser:
    p = AnalysisParser(prog=prog, description=description)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument(
        "--level", type=confidence_level, default=0.95, help="confidence level of intervals [0.95]"
    )
    return p


def confidence_level(text: str) -> float:
    value = float(text)
    if not 0.5 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"--level must lie in [0.5, 1), not {text}")
    return value
