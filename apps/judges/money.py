"""How a judge's costs are written. Prices, budgets and the costs estimated from them
are in US dollars, the currency of the providers' price lists."""

from decimal import Decimal

CURRENCY = "US$"


def in_dollars(amount: Decimal | float | int | None, places: int = 4) -> str:
    """US$0.4217; a dash for no amount. Four places by default: one call costs
    fractions of a cent."""
    if amount is None:
        return "–"
    return f"{CURRENCY}{Decimal(amount):,.{places}f}"
