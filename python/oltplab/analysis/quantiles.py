"""Two-sided critical values of Student's t and the normal distribution, from scipy.special:
the functions scipy.stats.t.ppf and norm.ppf call, without importing scipy.stats (about 1 s
of every `oltplab show`, `compare` and `report`)."""

from scipy import special


def t_critical(level: float, df: float) -> float:
    """The t quantile at 0.5 + level/2: the half-width factor of a `level` interval."""
    return float(special.stdtrit(df, 0.5 + level / 2))


def z_critical(level: float) -> float:
    """The normal quantile at 0.5 + level/2."""
    return float(special.ndtri(0.5 + level / 2))
